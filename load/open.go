package load

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
)

// lateThreshold is how late a send may be before it counts as late, and how far behind the
// schedule the pool must fall before it grows.
const lateThreshold = time.Millisecond

// growCheck is how often the pool's growth is considered.
const growCheck = time.Millisecond

// backlogWatch decides the open loop's pool growth from its backlog: the requests due more
// than lateThreshold ago that wait for a connection. A backlog opens connections only when it
// has not shrunk over a response time (at least growCheck): the target holds the connections.
// A backlog the pool drains by itself opens none: the generator woke late, was stopped or
// descheduled, and the responses to what it sent then come back within a response time. Its
// wait is in the corrected latency all the same.
//
// A backlog that is first seen larger than what falls due in debtStall is the generator's
// debt: a target that holds the connections makes a backlog grow by the rate from nothing,
// checked every millisecond, while a generator that was stopped finds, when it runs again,
// every request due in the stop at once (5,000 after a second at -R 5000). While the pool works a
// debt off, every connection is busy, so that any hiccup of the target (or of a loaded
// machine) shows as a backlog that does not shrink: nothing opens a connection then, however
// long the stop was. A debt that has not shrunk for debtHold is not worked off: the target
// holds the connections (or answers too slowly to tell), and the backlog above the debt
// counts, as it does without one; the debt itself never opens a connection (opened for it,
// a stop of 2 s at -R 5000 would open 10,000 at once): the connections opened for what is
// above it take the oldest requests first, the debt's.
type backlogWatch struct {
	at, n   int64 // the check that last saw a backlog (at 0: none since it was gone), and its size over debt
	debt    int64 // the part of the backlog at its first sighting that the generator made, as drained since
	drained int64 // when the debt last shrank (or was taken on)
	allow   int64 // the backlog first seen that is no debt: what falls due in debtStall
}

// debtStall is the shortest stop of the generator whose backlog is its debt: shorter ones
// (a loaded machine's) are not told from a target that holds the connections as long, and
// the rule above holds for them alone. debtHold is how long a debt must not shrink before it
// counts as the target's.
const (
	debtStall = 50 * time.Millisecond
	debtHold  = 200 * time.Millisecond
)

// newBacklogWatch watches the backlog of a schedule of rate requests per second.
func newBacklogWatch(rate float64) backlogWatch {
	return backlogWatch{allow: 1 + int64(rate*debtStall.Seconds())}
}

// grow returns how many connections to open for a backlog of n at now, rt being the response
// time (meanRT): none until a check at least a response time after the first one to see it
// finds it (above its debt) no smaller, and none while a debt is being worked off; then the
// backlog above the debt.
func (w *backlogWatch) grow(now, n, rt int64) int64 {
	if n <= 0 {
		*w = backlogWatch{allow: w.allow}
		return 0
	}
	span := max(int64(growCheck), rt)
	if w.at != 0 && now-w.at < span {
		return 0 // too soon to tell: the earlier sighting stands
	}
	if w.at == 0 || now-w.at > span+int64(4*growCheck) {
		// A first sighting, or one after a long gap: what exceeds a short stop is a debt.
		debt := max(n-w.allow, 0)
		*w = backlogWatch{at: now, n: n - debt, debt: debt, drained: now, allow: w.allow}
		return 0
	}
	if n < w.debt {
		w.debt, w.drained = n, now
	}
	prev := w.n
	w.at, w.n = now, n-w.debt
	if (w.debt > 0 && now-w.drained < int64(debtHold)) || w.n < prev {
		return 0 // a debt being worked off, or a backlog that drains
	}
	return w.n
}

// meanRT moves the response time rt, a moving average of how long exchanges held their
// connection, by an exchange that took d.
func meanRT(rt, d int64) int64 {
	if d <= 0 {
		return rt
	}
	return rt + (d-rt)/16
}

// openSchedule is the state the open-loop workers share: request i of the schedule is due at
// start + i/rate, and the next free connection claims it.
type openSchedule struct {
	pacer     Pacer
	next      atomic.Int64 // the next request index to claim
	scheduled atomic.Int64 // requests sent (or attempted) from the schedule
	sent      atomic.Int64 // attempts started inside the window (sentIn)
	limit     time.Duration
	total     int64        // with -n: the number of requests; 0: by duration
	watch     backlogWatch // used by growPool alone (newBacklogWatch)
	// rt is the workers' response time (meanRT); a worker's update may overwrite another's
	// made at the same time: it only sets how long growth watches a backlog.
	rt atomic.Int64
}

// claim returns the next request's index and due time, or false when the schedule is over.
func (s *openSchedule) claim() (int64, time.Duration, bool) {
	i := s.next.Add(1) - 1
	due := s.pacer.Due(i)
	if (s.total > 0 && i >= s.total) || (s.limit > 0 && due >= s.limit) {
		return i, due, false
	}
	return i, due, true
}

// runOpen starts requests on the pacer's schedule. Each free connection claims the next
// request, waits until it is due and sends it; the wait for a free connection counts in the
// corrected latency. When requests fall more than lateThreshold behind because every
// connection is busy, and that backlog does not shrink over a response time (backlogWatch),
// new connections are opened, up to MaxConns, unless the generator itself is short of CPU
// (then more connections would only add load to it).
// reqs are the initial pool's requesters.
func (e *engine) runOpen(o options, names []string, reqs []scenario.Requester) (*measure.Step, error) {
	sched := &openSchedule{pacer: Pacer{Rate: e.cfg.Rate}, limit: e.to, total: e.cfg.Requests, watch: newBacklogWatch(e.cfg.Rate)}
	ws := &workerSet{e: e}
	e.drv = &openWorkers{ws}
	var clk *clock // wakes the workers when their requests are due (nil: Go timers)
	var wg sync.WaitGroup
	spawn := func(connect bool) error {
		id := len(ws.all)
		var req scenario.Requester
		if id < len(reqs) {
			req = reqs[id]
		} else {
			var err error
			if req, err = e.src.Requester(id%e.cfg.Threads, id); err != nil {
				return err
			}
		}
		w := newWorker(e, id, req)
		w.budget = -1
		if connect {
			// The initial pool connects before the clock starts, as wrk2's does. A failure
			// is not recorded here: the first request tries again and counts it.
			if nc, rc, err := e.dial.viaPool(e.ctx, w.dialed); err == nil {
				e.conns.Add(1)
				w.nc, w.rc = nc, rc
			}
		}
		ws.add(w)
		if !connect {
			wg.Add(1)
			go func() {
				defer wg.Done()
				w.openLoop(sched, clk)
			}()
		}
		return nil
	}
	for i := 0; i < e.cfg.Connections; i++ {
		if err := spawn(true); err != nil {
			return nil, err
		}
	}
	clk = newClock(e)
	defer clk.close()
	e.base = time.Now()
	for _, w := range ws.all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.openLoop(sched, clk)
		}()
	}
	starve := newStarvation()
	grown := make(chan struct{})
	go func() {
		defer close(grown)
		e.growPool(ws, sched, starve, spawn)
	}()
	var all sync.WaitGroup
	all.Add(1)
	go func() {
		defer all.Done()
		// Workers end when the schedule is over; the growth loop ends with them.
		<-grown
		wg.Wait()
	}()
	e.supervise(&all, o)
	s := e.finish(names)
	e.openCounts(s, sched.scheduled.Load(), sched.sent.Load())
	if w := lateWarning(s.Open, e.lateBusy.Load(), starve.seen, len(ws.all) >= e.cfg.MaxConns(), e.limit.Load() != nil); w != "" {
		s.Warnings = append(s.Warnings, w)
	}
	return s, nil
}

// openWorkers is the driver of the open loop on goroutine workers.
type openWorkers struct{ *workerSet }

// gauges: the workers, and those with a request in flight.
func (d openWorkers) gauges(iv *measure.Interval) {
	d.mu.Lock()
	defer d.mu.Unlock()
	iv.Connections = len(d.all)
	for _, w := range d.all {
		if w.inFlight.Load() {
			iv.InFlight++
		}
	}
}

// growPool opens connections while requests that are due stay unclaimed, until the
// schedule is over or the run stops.
func (e *engine) growPool(ws *workerSet, sched *openSchedule, starve *starvation, spawn func(bool) error) {
	tick := time.NewTicker(growCheck)
	defer tick.Stop()
	checks := 0
	starved := false
	for !e.stop.Load() {
		select {
		case <-tick.C:
		case <-e.ctx.Done():
			return
		}
		now := time.Since(e.base)
		if sched.limit > 0 && now >= sched.limit {
			return
		}
		if checks++; checks%20 == 0 {
			starved = starve.starved()
			e.starved.Store(starved)
		}
		due := sched.pacer.Count(now - lateThreshold) // requests due more than lateThreshold ago
		if sched.total > 0 {
			due = min(due, sched.total)
		}
		if sched.total > 0 && sched.next.Load() >= sched.total {
			return
		}
		backlog := sched.watch.grow(int64(now), due-sched.next.Load(), sched.rt.Load())
		if backlog <= 0 || starved || e.limit.Load() != nil {
			continue // no more connections past a limit of the generator's machine
		}
		room := e.cfg.MaxConns() - ws.count()
		for n := min(backlog, int64(room)); n > 0; n-- {
			if err := spawn(false); err != nil {
				return
			}
		}
	}
}

// lateWarning says when requests left later than their schedule: the generator (its CPU,
// its connection limit, or its machine's), not only the target, limited the run.
// Corrected latencies include the lag; uncorrected ones do not.
func lateWarning(o *measure.OpenLoop, busy int64, starved, poolFull, limited bool) string {
	if o.Scheduled == 0 || float64(o.LateSends) < 0.01*float64(o.Scheduled) {
		return ""
	}
	manyBusy := float64(busy) >= 0.01*float64(o.Scheduled)
	var why string
	switch {
	case starved && manyBusy:
		why = "the generator was short of CPU (goroutines waited over 1ms to run), and it opens no connection while it is"
	case starved:
		why = "the generator was short of CPU (goroutines waited over 1ms to run)"
	case manyBusy && limited:
		why = "every connection was busy and apiperf's own machine could not open more (the generator limit below), not the target's doing"
	case manyBusy && poolFull:
		why = "every connection was busy and --max-connections was reached"
	case manyBusy:
		why = fmt.Sprintf("every connection was busy for %d of them", busy)
	default:
		why = "the generator woke late (its timers or CPU), not for want of a free connection"
	}
	lag := o.MaxLag.Duration().Round(time.Microsecond)
	if lag >= time.Second {
		lag = lag.Round(time.Millisecond)
	}
	if o.Sent > 0 && o.Sent < o.Scheduled {
		return fmt.Sprintf("%d of the %d requests sent were sent more than %v late (max lag %v), and %d of the %d due in the window were never sent (the generator's shortfall): %s; corrected latencies include the lag",
			o.LateSends, o.Sent, lateThreshold, lag, o.Scheduled-o.Sent, o.Scheduled, why)
	}
	return fmt.Sprintf("%d of %d requests were sent more than %v late (max lag %v): %s; corrected latencies include the lag",
		o.LateSends, o.Scheduled, lateThreshold, lag, why)
}

// openLoop claims requests from the schedule and sends each when it is due, until the
// schedule is over or the run stops.
func (w *worker) openLoop(sched *openSchedule, clk *clock) {
	defer w.end()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	wake := make(chan struct{}, 1)
	var freeAt int64 // when this connection's last request ended
	// The schedule or the window's end ends the loop: a request not sent by then, even one due
	// inside the window, is not sent (the generator's shortfall); what is in flight is drained.
	for w.sending() {
		_, dueD, ok := sched.claim()
		if !ok {
			return
		}
		due := int64(dueD)
		// Claimed after its due time by a connection whose previous request was still in
		// flight then: it waited for a connection (not for the generator's CPU or timers).
		busy := w.e.now()-due > int64(lateThreshold) && freeAt-due > int64(lateThreshold)
		if !w.waitUntil(clk, due, timer, wake) {
			return
		}
		if !w.sending() || w.e.closed(w.e.now()) {
			return // a claimed request due inside the window is not sent after it closed
		}
		if due >= int64(w.e.from) {
			sched.scheduled.Add(1) // due inside the window (not in the warmup)
		}
		raw, n, ep, head := w.req.Request()
		start := w.e.now() // without keep-alive the connect is part of every request
		if w.nc == nil && !w.connect(n, ep) {
			if w.gaveUp {
				return // at a limit of the generator's machine: no attempt, nothing sent
			}
			if w.e.sentIn(start) {
				sched.sent.Add(1) // a connect error: an attempt at the target
			}
			continue
		}
		if w.e.sentIn(start) {
			sched.sent.Add(1)
		}
		if !w.e.cfg.NoKeepAlive {
			start = w.e.now()
		}
		if lag := start - due; lag > int64(lateThreshold) {
			w.e.noteLag(lag)
			if busy {
				w.e.lateBusy.Add(1)
			}
		}
		w.inFlight.Store(true) // read by the supervisor for the live in-flight count
		w.exchange(raw, n, ep, head, due, start)
		w.inFlight.Store(false)
		if w.e.cfg.NoKeepAlive {
			w.closeConn()
		}
		freeAt = w.e.now()
		sched.rt.Store(meanRT(sched.rt.Load(), freeAt-start))
	}
}

// waitUntil waits until due (an offset from the step's start) on the run's precise clock, or
// on a Go timer where there is none; false when the run was cancelled first.
func (w *worker) waitUntil(clk *clock, due int64, timer *time.Timer, wake chan struct{}) bool {
	if clk != nil {
		return clk.wait(w.e.ctx, due, wake)
	}
	if wait := due - w.e.now(); wait > 0 {
		timer.Reset(time.Duration(wait))
		select {
		case <-timer.C:
		case <-w.e.ctx.Done():
			return false
		}
	}
	return true
}
