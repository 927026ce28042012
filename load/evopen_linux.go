//go:build linux

package load

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
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
	pacer       Pacer
	first, step int64 // this loop's requests: first, first+step, first+2*step, ...
	k           int64 // requests taken from this loop's share so far
	due         int64 // when request first+k*step is due (offset from the step's start)
	limit       int64 // requests due at or after this are past the schedule (0: by count)
	total       int64 // -n: the schedule's length (0: by duration)
	over        bool  // the loop sends nothing more
	free        connRing
	busy        int   // connections with a request (connecting, writing or reading)
	growing     int   // connections opening for the backlog, without a request yet
	noFreeAt    int64 // the last time a due request found no free connection
	burst       int64 // the earliest time of the next burst of sends (see openQuantum)
	early       int64 // how early the timer wakes the loop, which spins the rest to the due time
	earlyCap    int64 // at most this early (0: never)
	wakeLag     int64 // how late the timer's wake-ups come, a moving average
	growAt      int64 // the pool's growth is considered again at this time
	noGrow      bool  // a requester for a new connection could not be made
	scheduled   int64 // requests due inside the measured window that were taken
	tfd         int   // the timerfd, in the loop's epoll set
	armed       int64 // the wake-up the timerfd is set for (0: not armed)
	expires     int64 // when it is to expire: armed, or when it was set if armed was past
	parks       int64 // how often the loop waited for an event
	checkAt     int64 // when starvation is checked next
	parksAt     int64 // parks at the last check
	wakes, slow int   // timer wake-ups since the last check, and those over starvedWait late
	starve      *starvation
	starved     bool         // short of CPU at the last check: the pool does not grow
	seen        bool         // starved at some point
	backlog     backlogWatch // whether a backlog is the target's doing: then the pool grows
	rt          int64        // the response time (meanRT)
	inFlight    atomic.Int64
	thread      int
	netpoll     bool  // the loop waits through Go's netpoller, woken by the timerfd
	stampable   bool  // every connection asked the kernel for receive timestamps
	stamps      bool  // and the last read had one: the loop may sleep through arrivals
	wall        int64 // the wall clock minus the step's clock at the last wake-up, to read the stamps
	dialing     int   // connections connecting (the loop waits for their readiness, not a fixed time)
	blocked     bool  // a write waited for room in the socket (ditto, until it is done)
	raw         bool  // short waits keep the thread's P (see rawBlock)
	quantum     int64 // the loop's quantum: openQuantum, or less for a small pool (setQuantum)
	rd          stampReader
}

// maxBlock bounds a loop's wait in epoll_pwait2, so that it sees a cancellation soon.
const maxBlock = int64(20 * time.Millisecond)

// timerID marks the timerfd's events (connections use their index).
const timerID = -1

// openQuantum is the shortest time between two bursts of sends of a loop: at high rates the
// requests that fall due in it are sent together, at most openQuantum late (their lag counts
// in the corrected latency), instead of one wake-up of the generator and of the target per
// request. wrk2's bursts come from its millisecond timers. At lower rates (gaps between a
// loop's requests of ownTime or more) every request is sent on its own due time. A loop whose
// pool is small for its rate uses a shorter quantum (see setQuantum). The bursts' size is most
// of the open loop's cost: each wakes the target once (its wake-up is paid in the generator's
// send) and the generator once. At -R 40000 over 50 connections against nginx, a quantum of
// 416 us cost 1.3 times the CPU per request of one of 750 us; 750 us and 833 us cost the same.
// It stays under lateThreshold by a margin for the timer's own lateness, so that a send late
// by design does not count as a late send.
const openQuantum = int64(750 * time.Microsecond)

// ownTime is the gap between a loop's requests from which each is sent on its own due time.
const ownTime = int64(500 * time.Microsecond)

// minQuantum is the shortest quantum a small pool gets.
const minQuantum = int64(50 * time.Microsecond)

// openEarly is how early, at least, the timer wakes a loop for a request, which then spins to
// its due time: a wake-up through the netpoller takes tens to hundreds of microseconds, which
// would be counted as the server's latency. The loop wakes twice as early as its wake-ups
// have been late lately, at least openEarly, at most a tenth of the time between its requests
// (so spinning costs at most a tenth of a CPU), and not at all when they are under a
// millisecond apart (at such rates the wake-ups themselves are what costs, and a request is
// at most openQuantum late).
const openEarly = int64(50 * time.Microsecond)

// runOpenEvloop runs the open loop on one event loop per engine thread; reqs are the
// initial pool's requesters.
func (e *engine) runOpenEvloop(o options, names []string, reqs []scenario.Requester) (*measure.Step, error) {
	loops, err := e.makeEvloops()
	if err != nil {
		return nil, err
	}
	e.sched = &openSchedule{pacer: Pacer{Rate: e.cfg.Rate}, limit: e.to, total: e.cfg.Requests}
	raw := runtime.GOMAXPROCS(0) > len(loops) || !servedHere(sockPort(loops[0].sa))
	for t, l := range loops {
		if err := l.openInit(t, len(loops), o.io == ioEvloopNetpoll, raw); err != nil {
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
	e.pool.Store(int64(len(reqs)))
	e.connIDs.Store(int64(len(reqs)))
	for _, l := range loops {
		l.dialPool()
	}
	e.loops = loops
	var tooBig error // the ring's file table has a slot for every connection the pool may open
	if e.cfg.MaxConns() > maxRingFiles {
		tooBig = fmt.Errorf("a pool of up to %d connections is more than an io_uring file table holds (%d)", e.cfg.MaxConns(), maxRingFiles)
	}
	e.chooseRing(o, loops, tooBig)
	e.base = time.Now()
	var wg sync.WaitGroup
	for _, l := range loops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.runOpen()
		}()
	}
	e.supervise(&wg, o)
	s := e.finish(names)
	starved := false
	for _, l := range loops {
		s.Open.Scheduled += l.o.scheduled
		starved = starved || l.o.seen
	}
	if w := lateWarning(s.Open, e.lateBusy.Load(), starved, e.pool.Load() >= int64(e.cfg.MaxConns())); w != "" {
		s.Warnings = append(s.Warnings, w)
	}
	return s, nil
}

// openInit gives loop t of n its share of the schedule and its timerfd.
func (l *evloop) openInit(t, n int, netpoll, raw bool) error {
	e := l.e
	o := &openLoop{pacer: Pacer{Rate: e.cfg.Rate}, first: int64(t), step: int64(n), limit: int64(e.to),
		total: e.cfg.Requests, tfd: -1, starve: newStarvation(), thread: t, netpoll: netpoll, stampable: !netpoll, raw: raw}
	l.o = o
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return os.NewSyscallError("timerfd_create", err)
	}
	o.tfd = fd
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | unix.EPOLLET, Fd: timerID}
	if err := syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
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

// past reports whether the loop's next request is beyond the schedule.
func (o *openLoop) past() bool {
	i := o.first + o.k*o.step
	return (o.total > 0 && i >= o.total) || (o.limit > 0 && o.due >= o.limit)
}

// advance moves on to the loop's next request.
func (o *openLoop) advance() {
	o.k++
	o.due = int64(o.pacer.Due(o.first + o.k*o.step))
	o.over = o.over || o.past()
}

// dueBy is how many of the loop's requests are due by t.
func (o *openLoop) dueBy(t int64) int64 {
	n := o.pacer.Count(time.Duration(t))
	if o.total > 0 {
		n = min(n, o.total)
	}
	if n <= o.first {
		return 0
	}
	return (n - o.first + o.step - 1) / o.step
}

// addConn adds a connection, not yet open, to the loop's pool.
func (l *evloop) addConn(r scenario.Requester, num int) *econn {
	c := &econn{id: int32(len(l.conns)), fd: -1, req: r, budget: -1, x: newExplainer(num, r)}
	c.p.metric = l.samples.rec.Metric
	l.conns = append(l.conns, c)
	l.setQuantum()
	return c
}

// setQuantum sizes the loop's quantum to its rate and its pool. A loop whose requests are at
// least ownTime apart sends each on its own due time. Otherwise a connection sent a request in
// one burst is read, and free again, at the next wake-up at the earliest, so a pool carries at
// most one burst of its size per quantum; the quantum leaves it half as much again: at most
// two thirds of the pool falls due in one (50 connections at 40,000 req/s: 833 us, capped at
// openQuantum; at 120,000 req/s: 278 us).
func (l *evloop) setQuantum() {
	o := l.o
	gap := float64(o.step) * float64(time.Second) / l.e.cfg.Rate // between the loop's requests
	q := openQuantum
	if gap >= float64(ownTime) {
		q = ownTime
	}
	o.quantum = min(q, max(minQuantum, int64(float64(len(l.conns))*gap/1.5)))
}

// dialPool opens the loop's first connections before the clock starts, as wrk2 does. A
// failure is not recorded here: the first request on that connection connects again and
// counts it.
func (l *evloop) dialPool() {
	t0 := time.Now()
	pending := 0
	for _, c := range l.conns {
		fd, err := l.socket()
		if err != nil {
			continue
		}
		c.fd, c.state = fd, cConnecting
		if l.ctl(syscall.EPOLL_CTL_ADD, c, syscall.EPOLLOUT) != nil {
			l.closeFD(c)
			c.state = cIdle
			continue
		}
		pending++
	}
	for pending > 0 {
		left := l.e.timeout - time.Since(t0)
		if left <= 0 {
			break
		}
		n, err := syscall.EpollWait(l.epfd, l.events, int((left+time.Millisecond-1)/time.Millisecond))
		if err != nil && err != syscall.EINTR {
			break
		}
		for _, ev := range l.events[:max(n, 0)] {
			if ev.Fd < 0 {
				continue
			}
			c := l.conns[ev.Fd]
			if c.state != cConnecting {
				continue
			}
			pending--
			c.state = cIdle
			soerr, err := syscall.GetsockoptInt(c.fd, syscall.SOL_SOCKET, syscall.SO_ERROR)
			if err != nil || soerr != 0 || l.ctl(syscall.EPOLL_CTL_MOD, c, syscall.EPOLLIN) != nil {
				l.closeFD(c)
				continue
			}
			l.e.conns.Add(1)
			l.e.connTime.Add(int64(time.Since(t0)))
		}
	}
	for _, c := range l.conns {
		if c.state == cConnecting {
			l.closeFD(c)
			c.state = cIdle
		}
		l.o.free.push(c)
	}
}

// socket makes a non-blocking TCP socket and starts connecting it to the target.
func (l *evloop) socket() (int, error) {
	fd, err := syscall.Socket(l.family, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	_ = syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
	if l.o.stampable && !stampConn(fd) {
		l.o.stampable = false
	}
	if err := syscall.Connect(fd, l.sa); err != nil && err != syscall.EINPROGRESS {
		syscall.Close(fd)
		return -1, err
	}
	return fd, nil
}

// runOpen sends the loop's requests when they are due and reads their responses, until its
// share of the schedule is sent and answered (or timed out), or the run is cancelled.
func (l *evloop) runOpen() {
	if l.useRing {
		defer l.startRing(l.e.cfg.MaxConns())()
		l.ringAdopt()
	}
	defer l.close()
	o := l.o
	for !l.e.cancel.Load() {
		now := l.wake()
		l.sendDue(now)
		if o.over && o.busy == 0 {
			return
		}
		o.inFlight.Store(int64(o.busy))
		want := l.wakeAt()
		switch {
		case l.ring != nil:
			// No yield between waits here: the loop is locked to its thread (the ring's
			// single issuer), and a locked goroutine's yield hands the P to another thread
			// and back, two thread switches a turn. The run's other goroutines run when the
			// runtime preempts the loop, as on the closed loop's ring.
			l.ringBlock(now, want)
		case !o.netpoll:
			if o.raw {
				runtime.Gosched() // the loop keeps its P in short waits: let the run's other goroutines in
			}
			l.block(now, want)
		default:
			l.arm(now, want)
			o.parks++
			if err := l.rc.Read(l.waitFn); err != nil {
				l.ready = 0 // interrupted: the loop condition sees the cancellation
			}
		}
		for _, ev := range l.events[:l.ready] {
			if ev.Fd == timerID {
				if o.armed > 0 {
					o.woke(l.e.now() - o.expires)
				}
				o.armed = 0
				continue
			}
			if c := l.conns[ev.Fd]; c.state != cDone && c.fd >= 0 {
				l.event(c, ev.Events)
			}
		}
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

// ringAdopt moves the connections dialPool opened from the loop's epoll set to its io_uring
// (nothing when the kernel refused the ring).
func (l *evloop) ringAdopt() {
	if l.ring == nil {
		return
	}
	for _, c := range l.conns {
		if c.fd < 0 {
			continue
		}
		if syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_DEL, c.fd, nil) != nil || l.armRead(c) != nil {
			l.closeFD(c) // the first request on it connects again
		}
	}
}

// sendDue sends every request that is due by now on a free connection.
func (l *evloop) sendDue(now int64) {
	o := l.o
	if o.over {
		return
	}
	if l.e.halted() {
		o.over = true // interrupted or stopped: what is in flight is still drained
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
		c := l.popFree()
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

// popFree returns the connection free longest, or nil. Once sending has stopped (the window
// closed), requests due inside it still go out on open connections, but none is opened for
// them.
func (l *evloop) popFree() *econn {
	o := l.o
	stopped := l.e.stop.Load()
	for {
		c := o.free.pop()
		if c == nil {
			if stopped && o.busy == 0 {
				o.over = true // no connection will come free: the rest cannot be sent
			}
			return nil
		}
		if c.fd < 0 && stopped {
			c.state = cDone
			continue
		}
		return c
	}
}

// take sends the loop's next request on c, connecting c first if it is closed.
func (l *evloop) take(c *econn, now int64) {
	o := l.o
	c.due, c.waited = o.due, o.noFreeAt >= o.due
	if c.due >= int64(l.e.from) {
		o.scheduled++
	}
	o.advance()
	raw, n, ep, head := c.req.Request()
	c.n, c.got, c.ep, c.head = n, 0, ep, head
	o.busy++
	if c.fd >= 0 {
		c.pending = raw
		l.transmit(c, now)
		return
	}
	c.pending, c.queued = raw, true // written once connected (a failure clears both)
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
func (l *evloop) connected(c *econn) {
	l.o.dialing--
	if c.queued {
		c.queued = false
		l.transmit(c, l.e.now())
		return
	}
	l.o.growing--
	l.o.free.push(c)
}

// openConnectFailed records a failed connect for the request waiting on it (a connection
// opened for the backlog has none) and makes c free again, closed.
func (l *evloop) openConnectFailed(c *econn) {
	queued, o := c.queued, l.o
	o.dialing--
	l.closeFD(c)
	c.state = cIdle
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

// idleEvent handles a free connection that became readable: the server closed it (or sent
// bytes nobody asked for). It is closed; the next request on it connects again.
func (l *evloop) idleEvent(c *econn) {
	if l.o != nil {
		l.closeFD(c)
	}
}

// grow opens connections while requests due more than lateThreshold ago wait for one, up
// to the run's MaxConns, unless the generator is short of CPU.
func (l *evloop) grow(now int64) {
	o := l.o
	if now < o.growAt || o.noGrow || l.e.stop.Load() {
		return
	}
	o.growAt = now + int64(growCheck)
	l.checkStarved(now)
	if o.starved {
		return
	}
	for n := o.backlog.grow(now, o.dueBy(now-int64(lateThreshold))-o.k-int64(o.growing), o.rt); n > 0 && l.e.claimConn(); n-- {
		l.e.reqMu.Lock()
		num := int(l.e.connIDs.Add(1) - 1)
		r, err := l.e.src.Requester(o.thread, num)
		l.e.reqMu.Unlock()
		if err != nil {
			l.e.pool.Add(-1)
			o.noGrow = true
			return
		}
		c := l.addConn(r, num)
		o.growing++
		l.dial(c)
	}
}

// woke notes how late a timer wake-up came.
func (o *openLoop) woke(late int64) {
	o.wakes++
	if late > int64(starvedWait) {
		o.slow++
		return // not counted in the average: the machine was short of CPU
	}
	o.wakeLag += (max(late, 0) - o.wakeLag) / 8
	if o.earlyCap > 0 {
		o.early = min(o.earlyCap, max(openEarly, 2*o.wakeLag))
	}
}

// checkStarved finds out, at most every 20 ms, whether the generator is short of CPU: the
// runtime's goroutines wait to run, the loop's timer wakes it over starvedWait late more
// than starvedShare of the time, or the loop did not wait for an event once since the last
// check (it was busy all the time).
func (l *evloop) checkStarved(now int64) {
	o := l.o
	if now < o.checkAt {
		return
	}
	o.checkAt = now + int64(20*growCheck)
	idle := o.parks != o.parksAt
	o.parksAt = o.parks
	late := o.slow > 1 && float64(o.slow) > starvedShare*float64(o.wakes)
	o.wakes, o.slow = 0, 0
	o.starved = o.starve.starved() || !idle || late
	o.seen = o.seen || o.starved
	l.e.starved.Store(o.starved)
}

// claimConn takes a place in the open-loop pool, if MaxConns allows.
func (e *engine) claimConn() bool {
	for {
		n := e.pool.Load()
		if n >= int64(e.cfg.MaxConns()) {
			return false
		}
		if e.pool.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// inFlight is how many of an open loop's requests are in flight.
func (l *evloop) inFlight() int64 {
	if l.o == nil {
		return 0
	}
	return l.o.inFlight.Load()
}

// connRing is a FIFO of free connections.
type connRing struct {
	buf  []*econn
	head int
	n    int
}

func (r *connRing) push(c *econn) {
	if r.n == len(r.buf) {
		buf := make([]*econn, max(2*len(r.buf), 16))
		for i := 0; i < r.n; i++ {
			buf[i] = r.buf[(r.head+i)%len(r.buf)]
		}
		r.buf, r.head = buf, 0
	}
	r.buf[(r.head+r.n)%len(r.buf)] = c
	r.n++
}

func (r *connRing) pop() *econn {
	if r.n == 0 {
		return nil
	}
	c := r.buf[r.head]
	r.buf[r.head] = nil
	r.head = (r.head + 1) % len(r.buf)
	r.n--
	return c
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
