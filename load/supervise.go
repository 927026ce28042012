package load

import (
	"sync"
	"time"

	"github.com/apiperf/apiperf/scenario"
)

// supervise stops the run at its deadline or on cancellation, reports progress, and waits
// for the workers; it returns when the last worker ended. Workers that all ended because a
// script stopped their threads leave the run going until its duration is over, as in wrk.
func (e *engine) supervise(wg *sync.WaitGroup, o options) {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	var deadline <-chan time.Time
	if e.to > 0 {
		t := time.NewTimer(time.Until(e.base.Add(e.to)))
		defer t.Stop()
		deadline = t.C
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	sealer := time.NewTimer(e.nextSeal())
	defer sealer.Stop()
	ctxDone := e.ctx.Done()
	var failed <-chan struct{} // the source failed (a script's request()): the run stops
	f, _ := e.src.(scenario.Failer)
	if f != nil {
		failed = f.Failed()
	}
	idle := false // every worker ended, waiting out the duration
	for {
		select {
		case <-failed:
			e.srcErr = f.Err()
			e.stop.Store(true)
			e.stopDial()
			failed = nil
		case <-sealer.C:
			now := time.Since(e.base)
			e.seal(now)
			sealer.Reset(e.nextSeal() - now)
		case <-done:
			if deadline != nil && time.Since(e.base) >= e.to {
				// the loops stopped at the window's end themselves, before this goroutine saw
				// the deadline's timer (a busy machine): the window ended all the same
				e.cut.CompareAndSwap(0, int64(e.to))
			}
			if deadline == nil || e.stopped.Load() == 0 || e.stop.Load() {
				return
			}
			idle, done = true, nil
		case <-deadline:
			e.cut.CompareAndSwap(0, int64(e.to))
			e.stop.Store(true)
			e.stopDial() // a connection not open by now would only send after the window
			deadline = nil
			if idle {
				return
			}
		case <-ctxDone:
			now := time.Since(e.base)
			if e.cut.CompareAndSwap(0, int64(max(now, e.from))) {
				for _, r := range e.recs {
					r.Window(e.from, max(now, e.from))
				}
			}
			e.stop.Store(true)
			e.cancel.Store(true)
			e.drv.interrupt()
			ctxDone = nil
			if idle {
				return
			}
		case <-tick.C:
			if o.progress != nil {
				p := Progress{Elapsed: time.Since(e.base)}
				for _, r := range e.recs {
					req, errs := r.Progress()
					p.Requests += req
					p.Errors += errs
				}
				o.progress(p)
			}
		}
	}
}

// closed reports whether the measured window is over at now: a closed loop sends nothing
// after it, even before the supervisor has noticed the deadline.
func (w *window) closed(now int64) bool { return w.to > 0 && now >= int64(w.to) }

// halted reports whether the run stopped for another reason than the end of its window
// (an interruption, or a script's error).
func (w *window) halted() bool {
	return w.cancel.Load() || (w.stop.Load() && (w.to == 0 || w.cut.Load() != int64(w.to)))
}

// stopThread ends engine thread t's connections (a script's wrk.thread:stop()).
func (s *scriptStops) stopThread(t int) {
	if !s.threadStop[t].Swap(true) {
		s.stopped.Add(1)
	}
}
