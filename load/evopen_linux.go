//go:build linux

package load

import (
	"fmt"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
)

// The open loop on event loops. Each engine thread's loop owns every T-th request of the
// schedule (request i is due at start + i/rate; loop t of T takes i = t, t+T, ...) and a pool
// of connections. A due request goes to the connection that has been free longest and is
// written at once; when none is free it waits, and the wait counts in its corrected latency.
// The loop wakes itself when the next request is due (the nanosecond timeout of its
// io_uring's wait or of epoll_pwait2, or where that is missing a timerfd through Go's
// netpoller), so there is no goroutine or timer per request; at high rates the requests due
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
	pool *sharedPool
}

// gauges: the pool's connections, and the requests in flight on them.
func (d *evOpen) gauges(iv *measure.Interval) {
	iv.Connections = int(d.pool.size.Load())
	for _, l := range d.loops {
		iv.InFlight += int(l.o.inFlight.Load())
	}
}

// runOpenEvloop runs the open loop on one event loop per engine thread; reqs are the
// initial pool's requesters.
func (e *engine) runOpenEvloop(o options, names []string, reqs []scenario.Requester) (*measure.Step, error) {
	loops, err := e.makeEvloops()
	if err != nil {
		return nil, err
	}
	d := &evOpen{evloops: evloops{loops: loops}, pool: &sharedPool{}}
	raw := keepP(loops)
	for t, l := range loops {
		if err := l.openInit(t, len(loops), d.pool, o.io == ioEvloopNetpoll, raw); err != nil {
			for _, l := range loops {
				l.o.close()
			}
			closeLoops(loops)
			return nil, err
		}
	}
	for i, r := range reqs {
		loops[i%len(loops)].addConn(r, i)
	}
	d.pool.size.Store(int64(len(reqs)))
	d.pool.ids.Store(int64(len(reqs)))
	e.base = time.Now() // dialPool's connects and handshakes are timed on it; runLoops starts the step's clock
	for _, l := range loops {
		l.dialPool()
	}
	e.drv = d
	var tooBig error // the ring's file table has a slot for every connection the pool may open
	if e.cfg.MaxConns() > maxRingFiles {
		tooBig = fmt.Errorf("a pool of up to %d connections is more than an io_uring file table holds (%d)", e.cfg.MaxConns(), maxRingFiles)
	}
	d.ring.choose(o, loops, tooBig)
	e.runLoops(o, loops, (*evloop).runOpen)
	s := e.finish(names)
	starved := false
	var scheduled, sent int64
	for _, l := range loops {
		scheduled += l.o.scheduled
		sent += l.o.sent
		starved = starved || l.o.seen
	}
	e.openCounts(s, scheduled, sent)
	if w := lateWarning(s.Open, e.lateBusy.Load(), starved, d.pool.size.Load() >= int64(e.cfg.MaxConns()), e.limit.Load() != nil); w != "" {
		s.Warnings = append(s.Warnings, w)
	}
	return s, nil
}

// openInit gives loop t of n its share of the schedule, of the pool, and its timerfd.
func (l *evloop) openInit(t, n int, pool *sharedPool, netpoll, raw bool) error {
	e := l.e
	o := &openLoop{
		openShare:   openShare{pacer: Pacer{Rate: e.cfg.Rate}, first: int64(t), step: int64(n), limit: int64(e.to), total: e.cfg.Requests},
		openPool:    openPool{thread: t, shared: pool, backlog: newBacklogWatch(e.cfg.Rate / float64(n))},
		waker:       waker{tfd: -1, raw: raw},
		stampState:  stampState{stampable: !netpoll},
		starveWatch: starveWatch{starve: newStarvation()},
	}
	l.ep.netpoll = netpoll
	l.o, l.kind, o.l = o, o, l
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return os.NewSyscallError("timerfd_create", err)
	}
	o.tfd = fd
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | unix.EPOLLET, Fd: timerID}
	if err := syscall.EpollCtl(l.ep.epfd, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return os.NewSyscallError("epoll_ctl", err)
	}
	o.due = int64(o.pacer.Due(o.first))
	o.over = o.past()
	if gap := float64(n) * float64(time.Second) / e.cfg.Rate; gap >= float64(time.Millisecond) {
		o.earlyCap = int64(gap / 10)
		o.early = min(o.earlyCap, 2*openEarly)
	}
	return nil
}

func (o *openLoop) close() {
	if o != nil && o.tfd >= 0 {
		syscall.Close(o.tfd)
		o.tfd = -1
	}
}

// runOpen sends the loop's requests when they are due and reads their responses, until its
// share of the schedule is sent and answered (or timed out), or the run is cancelled.
func (l *evloop) runOpen() {
	if l.useRing {
		defer l.startRing(l.e.cfg.MaxConns(), true)()
	}
	defer l.close()
	o := l.o
	for !l.e.cancel.Load() {
		l.startHandshakes()
		now := l.wake()
		l.sendDue(now)
		if o.over && o.busy == 0 {
			return
		}
		o.inFlight.Store(int64(o.busy))
		want := l.wakeAt()
		// On an io_uring there is no yield between waits: the loop is locked to its thread
		// (the ring's single issuer), and a locked goroutine's yield hands the P to another
		// thread and back, two thread switches a turn. The run's other goroutines run when the
		// runtime preempts the loop, as on the closed loop's ring.
		l.io.pace(now, want)
		now = l.wake()
		if now-l.lastScan >= l.scan {
			l.lastScan = now
			l.expire(now)
			if o.early > 0 {
				l.checkStarved(now) // no spinning when the machine is short of CPU
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
func (l *evloop) sendDue(now int64) {
	o := l.o
	if o.over {
		return
	}
	if l.e.halted() || l.e.closed(now) {
		o.over = true // interrupted, stopped, or the window closed: what is in flight is still drained
		return
	}
	if now < o.burst && o.due > now-o.quantum {
		return // the next burst is due at o.burst (a loop behind its schedule does not wait for it)
	}
	if o.early > 0 && !o.over && o.due > now && o.due-now <= o.early && o.free.n > 0 && !o.starved {
		for now < o.due { // woken early on purpose: spin the last microseconds
			now = l.e.now()
		}
	}
	sent := false
	for !o.over && o.due <= now {
		c := o.free.pop() // the connection free longest
		if c == nil {
			o.noFreeAt = now
			l.grow(now)
			break
		}
		l.take(c, now)
		sent = true
	}
	if sent {
		// Bursts keep to a grid of openQuantum, however late a wake-up came; after a pause
		// (a low rate, an overloaded generator) the grid starts again from now.
		// A send ahead of the grid (a loop behind its schedule) does not push the grid further
		// out: the next burst is never more than a quantum away.
		o.burst = min(max(o.burst, now-o.quantum)+o.quantum, now+o.quantum)
	}
}

// take sends the loop's next request on c, connecting c first if it is closed.
func (l *evloop) take(c *econn, now int64) {
	o := l.o
	c.due, c.waited = o.due, o.noFreeAt >= o.due
	if c.due >= int64(l.e.from) {
		o.scheduled++
	}
	c.sentIn = l.e.sentIn(now)
	if c.sentIn {
		o.sent++
	}
	o.advance()
	raw, n, ep, head := c.req.Request()
	c.n, c.got, c.ep, c.head = n, 0, ep, head
	o.busy++
	c.setRequest(raw)
	if c.fd >= 0 {
		l.transmit(c, now)
		return
	}
	c.queued = true // written once connected (a failure clears it and the request)
	l.dial(c)
}

// dial connects c (closed) to the target, with receive timestamps when the loop uses them.
func (l *evloop) dial(c *econn) {
	o := l.o
	o.dialing++
	l.connect(c)
	if c.fd >= 0 && o.stampable && !stampConn(c.fd) {
		o.stampable, o.stamps = false, false
	}
}

// transmit writes c's request, due at c.due, now.
func (l *evloop) transmit(c *econn, now int64) {
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
		l.o.blocked = true
	}
}

// connected takes c, just connected: its waiting request is written, or it joins the free.
func (o *openLoop) connected(c *econn) {
	l := o.l
	if o.predial {
		return // dialPool frees it with the rest of the initial pool
	}
	l.o.dialing--
	if c.queued {
		c.queued = false
		l.transmit(c, l.e.now())
		return
	}
	l.o.growing--
	l.o.free.push(c)
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
func (o *openLoop) freed(c *econn, _ bool) {
	o.busy--
	o.free.push(c)
}

// took moves the response time by an exchange that took d.
func (o *openLoop) took(d int64) { o.rt = meanRT(o.rt, d) }

// broken: the open loop sends nothing more and ends.
func (o *openLoop) broken() { o.over, o.busy = true, 0 }

// checkStarved finds out, at most every 20 ms, whether the generator is short of CPU
// (starveWatch.check), and tells the run.
func (l *evloop) checkStarved(now int64) {
	if l.o.check(now) {
		l.e.starved.Store(l.o.starved)
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
