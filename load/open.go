package load

import (
	"fmt"
	"sync"
	"time"

	"github.com/apiperf/apiperf/measure"
)

// lateThreshold is how late a send may be before it counts as late.
const lateThreshold = time.Millisecond

// runOpen starts requests on the pacer's schedule. Each request goes to an idle connection;
// when none is idle, a new one is opened up to MaxConns; past that the dispatcher waits for
// one to come free, and the wait shows in the corrected latency and the schedule lag.
func (e *engine) runOpen(o options, names []string) (*measure.Step, error) {
	pacer := Pacer{Rate: e.cfg.Rate}
	idle := make(chan *worker, e.cfg.MaxConns())
	var wg sync.WaitGroup
	start := func(w *worker) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.openLoop(idle)
		}()
	}
	newWorker := func() (*worker, error) {
		id := len(e.workers)
		req, err := e.src.Requester(id%e.cfg.Threads, id)
		if err != nil {
			return nil, err
		}
		w := newWorker(e, id, req)
		w.budget = -1
		w.jobs = make(chan int64, 1)
		e.addWorker(w)
		return w, nil
	}
	// The initial pool connects before the clock starts, as wrk2's does.
	for i := 0; i < e.cfg.Connections; i++ {
		w, err := newWorker()
		if err != nil {
			return nil, err
		}
		if nc, rc, err := e.dial.viaPool(e.ctx, w.dialed); err == nil {
			// A failure here is not recorded: the first request will try again and count it.
			e.conns.Add(1)
			w.nc, w.rc = nc, rc
		}
	}
	e.base = time.Now()
	for _, w := range e.workers {
		start(w)
		idle <- w
	}
	limit := time.Duration(e.cfg.Duration)
	var scheduled int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			e.mu.Lock()
			for _, w := range e.workers {
				close(w.jobs)
			}
			e.mu.Unlock()
		}()
		for i := int64(0); ; i++ {
			if e.cfg.Requests > 0 && i >= e.cfg.Requests {
				return
			}
			due := pacer.Due(i)
			if limit > 0 && due >= limit {
				return
			}
			if wait := due - time.Since(e.base); wait > 0 {
				if !e.sleepUntil(wait) {
					return
				}
			}
			if e.stop.Load() {
				return
			}
			var w *worker
			select {
			case w = <-idle:
			default:
				if len(e.workers) < e.cfg.MaxConns() {
					nw, err := newWorker()
					if err == nil {
						start(nw)
						w = nw
					}
				}
				if w == nil {
					select {
					case w = <-idle:
					case <-e.ctx.Done():
						return
					}
				}
			}
			scheduled++
			w.jobs <- int64(due)
		}
	}()
	var all sync.WaitGroup
	all.Add(1)
	go func() {
		<-done
		wg.Wait()
		all.Done()
	}()
	end := e.supervise(&all, o)
	s := e.finish(end, names)
	s.Open.Scheduled = scheduled
	if w := lateWarning(s.Open, len(e.workers) >= e.cfg.MaxConns()); w != "" {
		s.Warnings = append(s.Warnings, w)
	}
	return s, nil
}

// sleepUntil waits d unless the run is stopped first.
func (e *engine) sleepUntil(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-e.ctx.Done():
		return false
	}
}

// openLoop serves jobs (due times) from the dispatcher until its channel closes.
func (w *worker) openLoop(idle chan<- *worker) {
	defer w.end()
	for due := range w.jobs {
		if w.e.stop.Load() && w.e.cancel.Load() {
			continue
		}
		raw, n, ep, head := w.req.Request()
		if w.nc == nil && !w.connect(n, ep) {
			idle <- w
			continue
		}
		start := w.e.now()
		if lag := start - due; lag > int64(lateThreshold) {
			w.e.lateSend.Add(1)
			for {
				cur := w.e.maxLag.Load()
				if lag <= cur || w.e.maxLag.CompareAndSwap(cur, lag) {
					break
				}
			}
		}
		w.exchange(raw, n, ep, head, due, start)
		idle <- w
	}
}

// lateWarning says when requests left later than their schedule: the generator (its CPU, or
// its connection limit when poolFull), not only the target, limited the run. Corrected
// latencies include the lag; uncorrected ones do not.
func lateWarning(o *measure.OpenLoop, poolFull bool) string {
	if o.Scheduled == 0 || float64(o.LateSends) < 0.01*float64(o.Scheduled) {
		return ""
	}
	why := "the generator could not keep to the schedule (CPU starved or too slow)"
	if poolFull {
		why = "every connection was busy and --max-connections was reached"
	}
	return fmt.Sprintf("%d of %d requests were sent more than %v late (max lag %v): %s; corrected latencies include the lag",
		o.LateSends, o.Scheduled, lateThreshold, o.MaxLag.Duration().Round(time.Microsecond), why)
}
