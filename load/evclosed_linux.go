//go:build linux

package load

import (
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
)

// evloops are the event loops of a run, one per engine thread: the part the closed and the
// open loop's drivers share.
type evloops struct {
	loops []*evloop
	ring  ringChoice
}

func (d *evloops) interrupt() {
	for _, l := range d.loops {
		l.interrupt()
	}
}

func (d *evloops) lastDone() int64 {
	var last int64
	for _, l := range d.loops {
		last = max(last, l.samples.lastDone)
	}
	return last
}

func (d *evloops) warning() string { return d.ring.warning() }

// evClosed is the driver of the closed loop on event loops.
type evClosed struct {
	evloops
	conns int
}

func (d *evClosed) gauges(iv *measure.Interval) { iv.Connections = d.conns }

// runEvloop runs the closed loop on one event loop per engine thread; reqs are the
// connections' requesters.
func (e *engine) runEvloop(o options, names []string, reqs []scenario.Requester) (*measure.Step, error) {
	loops, err := e.newEvloops(reqs, e.budgets(len(reqs)))
	if err != nil {
		return nil, err
	}
	d := &evClosed{evloops: evloops{loops: loops}, conns: e.cfg.Connections}
	e.drv = d
	d.ring.choose(o, loops, nil)
	d.ring.hold = keepP(loops)
	e.runLoops(o, len(loops), func(t int) { loops[t].run() })
	return e.finish(names), nil
}

// runLoops starts the step's clock, runs each of the n loops (run(t)) on a goroutine of its
// own, and supervises them to their end.
func (e *engine) runLoops(o options, n int, run func(t int)) {
	e.base = time.Now()
	var wg sync.WaitGroup
	for t := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(t)
		}()
	}
	e.supervise(&wg, o)
}

// ringChoice is whether a run's event loops do their I/O on io_uring, and why not.
type ringChoice struct {
	err    atomic.Pointer[error] // why an event loop could not use io_uring (it ran on epoll)
	on     bool                  // the loops do their I/O on io_uring where the kernel allows it
	forced bool                  // APIPERF_IO=uring: say so when it was refused
	hold   bool                  // the closed loop's waits may keep their Ps (keepP)
}

// refused notes why an event loop could not use io_uring.
func (r *ringChoice) refused(err error) { r.err.CompareAndSwap(nil, &err) }

// choose sets the event loops to do their I/O on io_uring, by default and with
// APIPERF_IO=uring, unless tooBig says this run does not fit a ring (the loops then run on
// epoll, and APIPERF_IO=uring says why). A loop whose kernel refuses the ring stays on epoll
// too (startRing).
func (r *ringChoice) choose(o options, loops []*evloop, tooBig error) {
	r.forced = o.io == ioUring
	r.on = o.io == ioUring || o.io == ioAuto
	if r.on && tooBig != nil {
		r.refused(tooBig)
		r.on = false
	}
	for _, l := range loops {
		l.ring = r
	}
}

func (r *ringChoice) warning() string {
	if p := r.err.Load(); p != nil && r.forced {
		return fmt.Sprintf("%s=uring: %v; the event loops ran on epoll", IOEnv, *p)
	}
	return ""
}

// newEvloops makes one loop per engine thread and deals the connections out to them.
func (e *engine) newEvloops(reqs []scenario.Requester, budgets []int64) ([]*evloop, error) {
	loops, err := e.makeEvloops(false, false)
	if err != nil {
		return nil, err
	}
	for _, l := range loops {
		l.kind = closedLoop{l}
	}
	for i, r := range reqs {
		c := loops[i%len(loops)].addConn(r, i, budgets[i])
		if c.budget != 0 {
			loops[i%len(loops)].active++
		} else {
			c.state = cDone
		}
	}
	return loops, nil
}

// addConn adds connection num, not yet open, to the loop, with budget requests (-1: until
// stopped).
func (l *evloop) addConn(r scenario.Requester, num int, budget int64) *econn {
	c := &econn{id: int32(len(l.conns)), fd: -1, req: r, budget: budget, x: newExplainer(num, r), tls: l.newTLSConn()}
	c.p.metric = l.samples.rec.Metric
	l.conns = append(l.conns, c)
	return c
}

// run serves the loop's connections until every one has finished (its budget spent, or
// the run stopped) or the run is cancelled.
func (l *evloop) run() {
	defer l.choosePoller(len(l.conns), nil)()
	defer l.close()
	for _, c := range l.conns {
		if c.state != cDone {
			l.next(c)
		}
	}
	for l.active > 0 && !l.e.cancel.Load() {
		l.startHandshakes()
		if l.retry.len() > 0 {
			for _, c := range l.retry.take() {
				l.next(c)
			}
		}
		var d int64 // connections to retry: no wait
		if l.retry.len() == 0 {
			d = l.scan
		}
		l.io.turn(d)
		if now := l.e.now(); now-l.lastScan >= l.scan {
			l.lastScan = now
			l.expire(now)
			if now-l.samples.flushed > maxBatchAge {
				l.samples.flush(now) // a quiet loop still reports what it has
			}
		}
	}
}

// closedLoop is the closed loop's evkind: each connection sends its next request as soon as
// its response is complete, and after a failure from the loop's retry list.
type closedLoop struct{ l *evloop }

// connected sends c's first request.
func (k closedLoop) connected(c *econn) { k.l.send(c) }

// connectFailed records a connect error for c's next request and tries again later; when
// err is a limit of the generator's machine, c is given up and nothing is recorded.
func (k closedLoop) connectFailed(c *econn, err error) {
	l := k.l
	l.closeFD(c)
	if l.e.stop.Load() || l.e.cancel.Load() {
		l.finish(c) // the run ended while connecting: not an attempt at the target
		return
	}
	if l.e.limited(err) {
		l.finish(c) // not an attempt at the target either
		return
	}
	_, n, ep, _ := c.req.Request()
	now := l.e.now()
	for i := 0; i < n; i++ {
		l.record(c, measure.Sample{Done: now, Class: measure.ConnectError, Endpoint: uint8(ep)})
	}
	l.retry.add(c)
}

// freed sends c's next request at once, or from the retry list after a failure.
func (k closedLoop) freed(c *econn, now bool) {
	if now {
		k.l.next(c)
		return
	}
	k.l.retry.add(c)
}

// retryList is the connections to send from again after a failure, in two arrays used in
// turn: the loop goes through one while failures fill the other. (Taking the list by slicing
// past its end made every failure after the first fill of the array's room allocate a new
// one: garbage in proportion to a run's failures, which grew a long run's memory.)
type retryList struct{ next, spare []*econn }

func (r *retryList) add(c *econn) { r.next = append(r.next, c) }

func (r *retryList) len() int { return len(r.next) }

// take returns the connections added so far; those added from now on go to the other array.
func (r *retryList) take() []*econn {
	out := r.next
	r.next, r.spare = r.spare[:0], out
	return out
}

// idle: a closed loop's connection without a request takes what arrives as the next
// response's (received).
func (closedLoop) idle(*econn) bool { return false }

func (k closedLoop) read(c *econn) (int, syscall.Errno) { return recv(c.fd, k.l.buf) }

func (closedLoop) took(int64) {}

func (closedLoop) broken() {}
