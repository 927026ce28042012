//go:build linux

package load

import (
	"fmt"
	"syscall"
	"time"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
)

// The open loop on event loops. Each engine thread's loop owns every T-th request of the
// schedule (request i is due at start + i/rate; loop t of T takes i = t, t+T, ...) and a pool
// of connections. A due request goes to the connection that has been free longest and is
// written at once; when none is free it waits, and the wait counts in its corrected latency.
// The loop wakes itself when the next request is due: it tells its backend how long to wait
// (pause, evwake_linux.go) and the backend waits (an io_uring's nanosecond timeout, epoll's),
// so there is no goroutine or timer per request; at high rates the requests due
// within openQuantum go out together. While requests are in flight it sleeps through their
// responses' arrivals, which the kernel stamps (evstamp_linux.go), and reads them all when it
// wakes. When due requests wait more than lateThreshold because every connection is busy,
// and that backlog does not shrink over a response time (backlogWatch), the loop opens more,
// up to MaxConns for the run, unless the generator is short of CPU.
type openLoop struct {
	l           *evloop
	openShare   // which requests of the schedule are the loop's, and when they are due
	openPool    // its connections: the free ones, the busy ones, the pool's growth
	waker       // when the loop wakes: bursts, early wake-ups, the timerfd
	stampState  // the kernel's receive timestamps, so the loop may sleep through arrivals
	starveWatch // whether the generator is short of CPU (then the pool does not grow)
}

// evOpen is the driver of the open loop on event loops.
type evOpen struct {
	evloops
	opens []*openLoop // one per event loop
	pool  *sharedPool
}

// gauges: the pool's connections, and the requests in flight on them.
func (d *evOpen) gauges(iv *measure.Interval) {
	iv.Connections = int(d.pool.size.Load())
	for _, o := range d.opens {
		iv.InFlight += int(o.inFlight.Load())
	}
}

// runOpenEvloop runs the open loop on one event loop per engine thread; reqs are the
// initial pool's requesters.
func (e *engine) runOpenEvloop(o options, names []string, reqs []scenario.Requester) (*measure.Step, error) {
	netpoll := o.io == ioEvloopNetpoll
	loops, err := e.makeEvloops(true, netpoll)
	if err != nil {
		return nil, err
	}
	d := &evOpen{evloops: evloops{loops: loops}, pool: &sharedPool{}}
	raw := keepP(loops)
	for t, l := range loops {
		d.opens = append(d.opens, newOpenLoop(l, t, len(loops), d.pool, netpoll, raw))
	}
	for i, r := range reqs {
		d.opens[i%len(loops)].addConn(r, i)
	}
	d.pool.size.Store(int64(len(reqs)))
	d.pool.ids.Store(int64(len(reqs)))
	e.base = time.Now() // dialPool's connects and handshakes are timed on it; runLoops starts the step's clock
	for _, o := range d.opens {
		o.dialPool()
	}
	e.drv = d
	var tooBig error // the ring's file table has a slot for every connection the pool may open
	if e.cfg.MaxConns() > maxRingFiles {
		tooBig = fmt.Errorf("a pool of up to %d connections is more than an io_uring file table holds (%d)", e.cfg.MaxConns(), maxRingFiles)
	}
	d.ring.choose(o, loops, tooBig)
	e.runLoops(o, len(d.opens), func(t int) { d.opens[t].run() })
	s := e.finish(names)
	starved := false
	var scheduled, sent int64
	for _, o := range d.opens {
		scheduled += o.scheduled
		sent += o.sent
		starved = starved || o.seen
	}
	e.openCounts(s, scheduled, sent)
	if w := lateWarning(s.Open, e.lateBusy.Load(), starved, d.pool.size.Load() >= int64(e.cfg.MaxConns()), e.limit.Load() != nil); w != "" {
		s.Warnings = append(s.Warnings, w)
	}
	return s, nil
}

// newOpenLoop makes l, loop t of n, an open loop: its share of the schedule and of the pool.
func newOpenLoop(l *evloop, t, n int, pool *sharedPool, netpoll, raw bool) *openLoop {
	e := l.e
	o := &openLoop{
		l:           l,
		openShare:   openShare{pacer: Pacer{Rate: e.cfg.Rate}, first: int64(t), step: int64(n), limit: int64(e.to), total: e.cfg.Requests},
		openPool:    openPool{thread: t, shared: pool, backlog: newBacklogWatch(e.cfg.Rate / float64(n))},
		waker:       waker{raw: raw},
		stampState:  stampState{stampable: !netpoll},
		starveWatch: starveWatch{starve: newStarvation()},
	}
	l.kind = o
	o.due = int64(o.pacer.Due(o.first))
	o.over = o.past()
	if gap := float64(n) * float64(time.Second) / e.cfg.Rate; gap >= float64(time.Millisecond) {
		o.earlyCap = int64(gap / 10)
		o.early = min(o.earlyCap, 2*openEarly)
	}
	return o
}

// run sends the loop's requests when they are due and reads their responses, until its
// share of the schedule is sent and answered (or timed out), or the run is cancelled.
func (o *openLoop) run() {
	l := o.l
	defer l.choosePoller(l.e.cfg.MaxConns(), &o.stampState)()
	defer l.close()
	for !l.e.cancel.Load() {
		l.startHandshakes()
		now := o.wake()
		o.sendDue(now)
		if o.over && o.busy == 0 {
			return
		}
		o.inFlight.Store(int64(o.busy))
		// On an io_uring there is no yield between waits: the loop is locked to its thread
		// (the ring's single issuer), and a locked goroutine's yield hands the P to another
		// thread and back, two thread switches a turn. The run's other goroutines run when the
		// runtime preempts the loop, as on the closed loop's ring.
		o.waited(l.io.pause(o.pauseFor(now, o.wakeAt())))
		now = o.wake()
		if now-l.lastScan >= l.scan {
			l.lastScan = now
			l.expire(now)
			if o.early > 0 {
				o.checkStarved(now) // no spinning when the machine is short of CPU
			}
		}
		if l.samples.n > 0 && now-l.samples.flushed > maxBatchAge {
			l.samples.flush(now) // a quiet loop still reports what it has
		}
	}
}

// maxRingFiles bounds an open loop's io_uring file table, which has a slot for every
// connection the pool may open (MaxConns); a larger pool runs on epoll.
const maxRingFiles = 1 << 16

// sendDue sends every request that is due by now on a free connection.
func (o *openLoop) sendDue(now int64) {
	l := o.l
	if o.over {
		return
	}
	if l.e.halted() || l.e.closed(now) {
		o.over = true // interrupted, stopped, or the window closed: what is in flight is still drained
		return
	}
	if o.holds(now, o.due) {
		return // the next burst is due at o.burst
	}
	if !o.over && o.free.n > 0 && !o.starved && o.spins(now, o.due) {
		for now < o.due { // woken early on purpose: spin the last microseconds
			now = l.e.now()
		}
	}
	sent := false
	for o.ready(now) {
		c := o.free.pop() // the connection free longest
		if c == nil {
			o.noFreeAt = now
			o.grow(now)
			break
		}
		o.take(c, now)
		sent = true
	}
	if sent {
		o.burstSent(now)
	}
}

// take sends the loop's next request on c, connecting c first if it is closed.
func (o *openLoop) take(c *econn, now int64) {
	l := o.l
	c.waited = o.noFreeAt >= o.due
	c.sentIn = l.e.sentIn(now)
	c.due = o.takeNext(int64(l.e.from), c.sentIn)
	raw, n, ep, head := c.req.Request()
	c.n, c.got, c.ep, c.head = n, 0, ep, head
	o.busy++
	c.setRequest(raw)
	if c.fd >= 0 {
		o.transmit(c, now)
		return
	}
	c.queued = true // written once connected (a failure clears it and the request)
	o.dial(c)
}

// dial connects c (closed) to the target, with receive timestamps when the loop uses them.
func (o *openLoop) dial(c *econn) {
	l := o.l
	o.dialing++
	l.connect(c)
	if c.fd >= 0 && o.stampable && !stampConn(c.fd) {
		o.stampable, o.stamps = false, false
	}
}

// transmit writes c's request, due at c.due, now.
func (o *openLoop) transmit(c *econn, now int64) {
	l := o.l
	if lag := now - c.due; lag > int64(lateThreshold) {
		l.e.noteLag(lag)
		if c.waited {
			l.e.lateBusy.Add(1)
		}
	}
	c.p.reset(c.head)
	c.rbytes, c.at = 0, 0
	c.start = now
	c.deadline = now + int64(l.e.timeout)
	c.state = cWriting
	l.write(c)
	if c.out {
		o.blocked = true
	}
}

// connected takes c, just connected: its waiting request is written, or it joins the free.
func (o *openLoop) connected(c *econn) {
	l := o.l
	if o.predial {
		return // dialPool frees it with the rest of the initial pool
	}
	o.dialing--
	if c.queued {
		c.queued = false
		o.transmit(c, l.e.now())
		return
	}
	o.opened(c)
}

// connectFailed records a failed connect for the request waiting on it (a connection
// opened for the backlog has none) and makes c free again, closed. At a limit of the
// generator's machine (err), c is given up, the pool grows no more and nothing is recorded.
func (o *openLoop) connectFailed(c *econn, err error) {
	l, queued := o.l, c.queued
	if o.predial {
		l.closeFD(c) // its first request connects again
		c.state = cIdle
		return
	}
	o.dialing--
	l.closeFD(c)
	c.state = cIdle
	if l.e.limited(err) {
		o.noGrow = true
		if queued {
			o.busy-- // not an attempt: not sent
			if c.sentIn {
				o.sent--
			}
		} else {
			o.growing--
		}
		c.state = cDone
		o.shared.size.Add(-1)
		return
	}
	ended := l.e.stop.Load() || l.e.cancel.Load()
	if !queued {
		o.growing--
	} else {
		o.busy--
		if !ended {
			now := l.e.now()
			for i := 0; i < c.n; i++ {
				l.record(c, measure.Sample{Done: now, Class: measure.ConnectError, Endpoint: uint8(c.ep)})
			}
		} // else: the run ended while connecting: not an attempt at the target
	}
	if ended {
		c.state = cDone
		return
	}
	o.free.push(c)
}

// idle handles a free connection that became readable: the server closed it (or sent
// bytes nobody asked for). It is closed; the next request on it connects again.
func (o *openLoop) idle(c *econn) bool {
	o.l.closeFD(c)
	return true
}

// freed makes c, whose requests are all answered or failed, free.
func (o *openLoop) freed(c *econn, _ bool) { o.release(c) }

// took moves the response time by an exchange that took d.
func (o *openLoop) took(d int64) { o.rt = meanRT(o.rt, d) }

// broken: the open loop sends nothing more and ends.
func (o *openLoop) broken() { o.over, o.busy = true, 0 }

// checkStarved finds out, at most every 20 ms, whether the generator is short of CPU
// (starveWatch.check), and tells the run.
func (o *openLoop) checkStarved(now int64) {
	if o.check(now) {
		o.l.e.starved.Store(o.starved)
	}
}

// sockPort is sa's port.
func sockPort(sa syscall.Sockaddr) int {
	switch a := sa.(type) {
	case *syscall.SockaddrInet4:
		return a.Port
	case *syscall.SockaddrInet6:
		return a.Port
	}
	return 0
}
