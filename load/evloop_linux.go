//go:build linux

package load

import (
	"context"
	"errors"
	"net"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
)

const evloopSupported = true

// An evloop runs the closed-loop connections of one engine thread on its own epoll set, as
// wrk does: no goroutine and no read buffer per connection, a read only when epoll says a
// response has arrived, and the next request written as soon as a response is complete.
// Connections are edge-triggered (connEvents): epoll reports a socket when something
// arrives, not again on every wait while it stays ready, so each event is read until the
// socket is drained (see read). The loop waits on its epoll descriptor through
// Go's netpoller, so it never blocks an OS thread. A closed loop does its I/O on an io_uring
// instead where the kernel allows it (evring_linux.go). It serves plain TCP without scripts
// that watch responses or delay requests; everything else runs on the goroutine workers.
type evloop struct {
	e        *engine
	epfd     int
	file     *os.File        // epfd, so the loop can wait in Go's netpoller
	rc       syscall.RawConn // of file
	conns    []*econn
	active   int // connections not finished
	retry    []*econn
	samples  sampleBatch
	buf      []byte // one read buffer for all the loop's connections
	events   []syscall.EpollEvent
	ready    int // events filled by the last wait
	waitFn   func(fd uintptr) bool
	sa       syscall.Sockaddr
	family   int
	scan     int64 // how often deadlines are checked, ns
	lastScan int64
	o        *openLoop // open loop: the loop's share of the schedule (nil: closed loop)
	useRing  bool      // do the I/O on an io_uring when the kernel allows it (chooseRing)
	ring     *ringIO   // the io_uring in use (nil: epoll)
}

// econn is one connection of an evloop.
type econn struct {
	id       int32 // index in the loop's conns, kept in the epoll event
	fd       int
	state    uint8
	req      scenario.Requester
	budget   int64 // requests left; -1: until stopped
	p        parser
	head     bool
	n, got   int // requests in the batch sent, responses read
	ep       int
	start    int64 // when the batch was sent
	due      int64 // when it was due (open loop; closed loop: start)
	deadline int64
	rbytes   int64
	pending  []byte // the part of the request the socket did not take yet
	out      bool   // EPOLLOUT is asked for (a write is waiting for room)
	carry    []byte // bytes read past the end of a response (pipelining)
	queued   bool   // open loop: a request waits for the connect to finish
	at       int64  // open loop: when the bytes read last arrived, by their kernel timestamp (0: unknown)
	waited   bool   // open loop: that request waited for a free connection
	gen      uint32 // bumped when fd closes (io_uring: completions for the old socket are ignored)
	sending  bool   // io_uring: a send is in flight
	sent     []byte // io_uring: what it sends (kept alive until it completes)
	x        explainer
}

const (
	cIdle uint8 = iota
	cConnecting
	cWriting
	cReading
	cDone
)

// evloopBatch is an event loop's batch size: one batch serves all its connections.
const evloopBatch = 64

// evloopReadBuf is the size of an evloop's read buffer.
const evloopReadBuf = 64 << 10

// newEvloops makes one loop per engine thread and deals the connections out to them.
func (e *engine) newEvloops(reqs []scenario.Requester, budgets []int64) ([]*evloop, error) {
	loops, err := e.makeEvloops()
	if err != nil {
		return nil, err
	}
	for i, r := range reqs {
		l := loops[i%len(loops)]
		c := &econn{id: int32(len(l.conns)), fd: -1, req: r, budget: budgets[i], x: newExplainer(i, r)}
		c.p.metric = l.samples.rec.Metric
		l.conns = append(l.conns, c)
		if c.budget != 0 {
			l.active++
		} else {
			c.state = cDone
		}
	}
	return loops, nil
}

// makeEvloops makes one loop, without connections, per engine thread.
func (e *engine) makeEvloops() ([]*evloop, error) {
	sa, family, err := sockaddr(e.ctx, e.target)
	if err != nil {
		return nil, err
	}
	loops := make([]*evloop, len(e.recs))
	for t := range loops {
		epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
		if err != nil {
			closeLoops(loops[:t])
			return nil, os.NewSyscallError("epoll_create1", err)
		}
		if err := syscall.SetNonblock(epfd, true); err != nil {
			syscall.Close(epfd)
			closeLoops(loops[:t])
			return nil, os.NewSyscallError("fcntl", err)
		}
		l := &evloop{
			e: e, epfd: epfd, file: os.NewFile(uintptr(epfd), "epoll"), samples: newSampleBatch(e.recs[t], evloopBatch),
			buf: make([]byte, evloopReadBuf), events: make([]syscall.EpollEvent, 256), sa: copySockaddr(sa), family: family,
			scan: int64(min(e.slack, 10*time.Millisecond)),
		}
		l.scan = max(l.scan, int64(time.Millisecond))
		if l.rc, err = l.file.SyscallConn(); err != nil {
			l.file.Close()
			closeLoops(loops[:t])
			return nil, err
		}
		l.waitFn = l.poll
		loops[t] = l
	}
	return loops, nil
}

func closeLoops(loops []*evloop) {
	for _, l := range loops {
		l.file.Close()
	}
}

// copySockaddr gives each loop its own address: a syscall.Sockaddr keeps a buffer it writes
// on every Connect, so it cannot be shared between goroutines.
func copySockaddr(sa syscall.Sockaddr) syscall.Sockaddr {
	switch a := sa.(type) {
	case *syscall.SockaddrInet4:
		c := *a
		return &c
	case *syscall.SockaddrInet6:
		c := *a
		return &c
	}
	return sa
}

// sockaddr resolves the target once.
func sockaddr(ctx context.Context, t scenario.Target) (syscall.Sockaddr, int, error) {
	port, err := net.LookupPort("tcp", t.Port)
	if err != nil {
		return nil, 0, err
	}
	ip := net.ParseIP(t.Host)
	if ip == nil {
		ips, err := net.DefaultResolver.LookupIPAddr(ctx, t.Host)
		if err != nil || len(ips) == 0 {
			return nil, 0, errors.New("resolving " + t.Host + ": no address")
		}
		ip = ips[0].IP
	}
	if v4 := ip.To4(); v4 != nil {
		sa := &syscall.SockaddrInet4{Port: port}
		copy(sa.Addr[:], v4)
		return sa, syscall.AF_INET, nil
	}
	sa := &syscall.SockaddrInet6{Port: port}
	copy(sa.Addr[:], ip.To16())
	return sa, syscall.AF_INET6, nil
}

// run serves the loop's connections until every one has finished (its budget spent, or
// the run stopped) or the run is cancelled.
func (l *evloop) run() {
	if l.useRing {
		defer l.startRing(len(l.conns))()
	}
	defer l.close()
	for _, c := range l.conns {
		if c.state != cDone {
			l.next(c)
		}
	}
	for l.active > 0 && !l.e.cancel.Load() {
		if len(l.retry) > 0 {
			retry := l.retry
			l.retry = l.retry[len(l.retry):]
			for _, c := range retry {
				l.next(c)
			}
		}
		if l.ring != nil {
			l.ringTurn(len(l.retry) == 0)
		} else {
			l.wait(len(l.retry) == 0)
			for _, ev := range l.events[:l.ready] {
				if c := l.conns[ev.Fd]; c.state != cDone && c.fd >= 0 {
					l.event(c, ev.Events)
				}
			}
		}
		if now := l.e.now(); now-l.lastScan >= l.scan {
			l.lastScan = now
			l.expire(now)
			if now-l.samples.flushed > maxBatchAge {
				l.samples.flush(now) // a quiet loop still reports what it has
			}
		}
	}
}

// poll is the netpoller callback: it takes the ready events, if any, without blocking.
func (l *evloop) poll(fd uintptr) bool {
	n, err := syscall.EpollWait(int(fd), l.events, 0)
	if err != nil || n <= 0 {
		l.ready = 0
		return err != nil && err != syscall.EINTR
	}
	l.ready = n
	return true
}

// wait fills l.events: at once when events are ready, otherwise it parks until one is or
// the next deadline check is due (block false: do not park at all).
func (l *evloop) wait(block bool) {
	if l.poll(uintptr(l.epfd)) || !block {
		return
	}
	_ = l.file.SetReadDeadline(time.Now().Add(time.Duration(l.scan)))
	if err := l.rc.Read(l.waitFn); err != nil {
		l.ready = 0
	}
}

// event handles what epoll reported for c.
func (l *evloop) event(c *econn, ev uint32) {
	switch c.state {
	case cConnecting:
		soerr, err := syscall.GetsockoptInt(c.fd, syscall.SOL_SOCKET, syscall.SO_ERROR)
		if err != nil || soerr != 0 {
			l.fail(c, measure.ConnectError)
			return
		}
		l.e.conns.Add(1)
		l.e.connTime.Add(l.e.now() - c.start)
		if err := l.armRead(c); err != nil {
			l.fail(c, measure.ConnectError)
			return
		}
		c.state = cIdle
		if l.o != nil {
			l.connected(c)
			return
		}
		l.send(c)
	case cIdle:
		l.idleEvent(c) // open loop: a free connection became readable
	case cWriting:
		l.write(c)
	case cReading:
		l.read(c, ev)
	}
}

// next sends c's next request, connecting first if needed, or finishes c.
func (l *evloop) next(c *econn) {
	if c.budget == 0 || l.e.stop.Load() {
		l.finish(c)
		return
	}
	if c.fd < 0 {
		l.connect(c)
		return
	}
	l.send(c)
}

func (l *evloop) connect(c *econn) {
	fd, err := syscall.Socket(l.family, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		l.connectFailed(c)
		return
	}
	_ = syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
	c.fd = fd
	c.start = l.e.now()
	c.deadline = c.start + int64(l.e.timeout)
	switch err := syscall.Connect(fd, l.sa); err {
	case nil, syscall.EINPROGRESS:
		c.state = cConnecting
		if err := l.awaitConnect(c); err != nil {
			l.connectFailed(c)
		}
	default:
		l.connectFailed(c)
	}
}

// connectFailed records a connect error for c's next request and tries again later.
func (l *evloop) connectFailed(c *econn) {
	if l.o != nil {
		l.openConnectFailed(c)
		return
	}
	l.closeFD(c)
	if l.e.stop.Load() || l.e.cancel.Load() {
		l.finish(c) // the run ended while connecting: not an attempt at the target
		return
	}
	_, n, ep, _ := c.req.Request()
	now := l.e.now()
	for i := 0; i < n; i++ {
		l.record(c, measure.Sample{Done: now, Class: measure.ConnectError, Endpoint: uint8(ep)})
	}
	l.retry = append(l.retry, c)
}

func (l *evloop) send(c *econn) {
	now := l.e.now()
	if l.e.closed(now) {
		l.finish(c)
		return
	}
	raw, n, ep, head := c.req.Request()
	if l.e.stop.Load() {
		l.finish(c) // the run ended while the request was made (a script's request())
		return
	}
	// Timed from here, as on the goroutine path and in wrk: the time a script's request()
	// takes is apiperf's, not the target's.
	if now = l.e.now(); l.e.closed(now) {
		l.finish(c)
		return
	}
	c.n, c.got, c.ep, c.head = n, 0, ep, head
	c.p.reset(head)
	c.rbytes = 0
	c.start, c.due = now, now
	c.deadline = c.start + int64(l.e.timeout)
	c.pending = raw
	c.state = cWriting
	l.write(c)
}

// write writes what is left of the request; the socket's buffer takes a small request at once.
// On an io_uring the send is queued (after the one in flight, if any) and completes later.
func (l *evloop) write(c *econn) {
	if l.ring != nil {
		if c.sending {
			return // the send in flight completes first, then this one is queued
		}
		l.ringSend(c)
	}
	for len(c.pending) > 0 {
		n, err := send(c.fd, c.pending)
		switch {
		case err == syscall.EAGAIN:
			if !c.out {
				c.out = true
				_ = l.ctl(syscall.EPOLL_CTL_MOD, c, syscall.EPOLLIN|syscall.EPOLLOUT)
			}
			return
		case err == syscall.EINTR:
			continue
		case err != 0:
			l.fail(c, measure.WriteError)
			return
		}
		c.pending = c.pending[n:]
	}
	if c.state == cWriting && c.n > 0 {
		c.state = cReading
		if c.out { // back to EPOLLIN alone once the write that waited for room is done
			c.out = false
			_ = l.ctl(syscall.EPOLL_CTL_MOD, c, syscall.EPOLLIN)
		}
		if len(c.carry) > 0 {
			l.consume(c, nil) // a pipelined response that already arrived
		}
	}
}

// read reads what arrived for c and parses it. The socket is edge-triggered, so what is not
// read now is not reported again: a read that fills the buffer is followed by another, and
// after a hang-up (data and FIN may come in one event) the socket is read to its end, so a
// close-delimited response completes and the close is seen. A read that returns less than
// the buffer took everything queued; what arrives later raises a new event.
func (l *evloop) read(c *econn, ev uint32) {
	hup := ev&(syscall.EPOLLRDHUP|syscall.EPOLLHUP|syscall.EPOLLERR) != 0
	gen := c.gen
	for {
		n, err := l.readConn(c)
		if err == syscall.EINTR {
			continue
		}
		l.received(c, l.buf[:max(n, 0)], err)
		if n <= 0 || (n < len(l.buf) && !hup) || c.gen != gen {
			return // drained, at its end, failed, or closed (and maybe reconnected) meanwhile
		}
		// More is there: the rest of the response, or the next one's (cWriting: the next
		// request waits for room, and the bytes wait in c.carry); after an open loop's
		// response, what its free connection got (received closes it).
	}
}

// received handles what a read of c gave: b, the end of the stream (b empty) or err. Bytes
// that arrive while no response is awaited (an io_uring receives whenever data comes) wait
// in c.carry for the next request; on an open loop's free connection, they or its end
// close it (idleEvent).
func (l *evloop) received(c *econn, b []byte, err syscall.Errno) {
	switch {
	case err == syscall.EAGAIN || err == syscall.EINTR:
		return
	case c.state == cIdle && l.o != nil:
		l.idleEvent(c) // a free connection of an open loop: closed by the server, or sent what nobody asked for
		return
	case err != 0:
		l.fail(c, measure.ReadError)
		return
	case len(b) == 0:
		if c.state == cReading && c.p.eof() {
			l.complete(c, nil)
			return
		}
		l.fail(c, measure.ReadError)
		return
	case c.state != cReading:
		c.carry = append(c.carry, b...)
		return
	}
	l.consume(c, b)
}

// consume feeds c's carried bytes and then b to the parser, completing responses.
func (l *evloop) consume(c *econn, b []byte) {
	if len(c.carry) > 0 {
		b = append(c.carry, b...)
		c.carry = c.carry[:0]
	}
	for c.state == cReading {
		used, err := c.p.feed(b)
		c.rbytes += int64(used)
		if err != nil {
			l.fail(c, classify(err))
			return
		}
		b = b[used:]
		if !c.p.done() {
			return
		}
		if l.complete(c, b) || len(b) == 0 {
			return // the batch is over (any rest went with it) or nothing is left
		}
		// The next response of a pipelined batch follows in b.
	}
}

// complete records the response just parsed. After a batch's last response it sends the next
// request (or reconnects when the server closes the connection) and reports true; rest, bytes
// read past that response, make it a protocol error instead.
func (l *evloop) complete(c *econn, rest []byte) bool {
	if c.got == c.n-1 && len(rest) > 0 && !c.p.close && !c.p.untilEOF {
		// Bytes past the last response asked for (a second response, garbage): the
		// exchange is a protocol error and the connection is not trusted again.
		l.fail(c, measure.ProtocolError)
		return true
	}
	now := l.doneAt(c)
	s := measure.Sample{Done: now, Latency: now - c.due, Uncorrected: now - c.start, Bytes: int32(min(c.rbytes, 1<<31-1)),
		Status: int16(c.p.status), Class: measure.Response, Endpoint: uint8(c.ep)}
	c.x.explain(&s, c.got, &c.p.timing)
	l.record(c, s)
	c.got++
	if c.p.close || c.p.untilEOF {
		l.closeFD(c)
		if c.got < c.n {
			l.failRest(c, measure.ReadError, now)
		}
		c.state = cIdle
		l.freed(c, true)
		return true
	}
	if c.got < c.n {
		c.p.reset(c.head)
		c.rbytes = 0
		return false
	}
	c.state = cIdle
	l.freed(c, true)
	return true
}

// freed takes c, whose requests are all answered or failed: a closed loop sends its next
// request (at once, or from the retry list after a failure), an open loop makes it free.
func (l *evloop) freed(c *econn, now bool) {
	switch {
	case l.o != nil:
		l.o.busy--
		l.o.free.push(c)
	case now:
		l.next(c)
	default:
		l.retry = append(l.retry, c)
	}
}

// fail records c's outstanding requests as failed, drops the connection and tries again.
func (l *evloop) fail(c *econn, class measure.Class) {
	if c.state == cConnecting {
		l.connectFailed(c)
		return
	}
	now := l.e.now()
	l.closeFD(c)
	if !l.e.cancel.Load() {
		l.failRest(c, class, now)
	}
	c.state = cIdle
	l.freed(c, false)
}

func (l *evloop) failRest(c *econn, class measure.Class, now int64) {
	for ; c.got < c.n; c.got++ {
		l.record(c, measure.Sample{Done: now, Latency: now - c.due, Uncorrected: now - c.start, Class: class, Endpoint: uint8(c.ep)})
	}
}

// expire fails every attempt that has passed its deadline: a timeout is noticed at most
// l.scan late.
func (l *evloop) expire(now int64) {
	for _, c := range l.conns {
		switch {
		case c.state == cConnecting && now > c.deadline:
			l.connectFailed(c)
		case (c.state == cReading || c.state == cWriting) && now > c.deadline:
			l.fail(c, measure.TimeoutError)
		}
	}
}

func (l *evloop) record(c *econn, s measure.Sample) {
	if c.budget > 0 {
		c.budget--
	}
	if l.o != nil {
		l.o.rt = meanRT(l.o.rt, s.Uncorrected)
	}
	l.samples.add(s)
}

// connEvents are the flags every connection's epoll registration carries besides
// EPOLLIN/EPOLLOUT: edge-triggered, so a socket is reported when something arrives rather
// than on every wait while it stays ready (each reported socket costs a poll of it at every
// wait); and the peer's half-close reported as such, so read reads to the end of the stream.
// EPOLL_CTL_MOD polls the socket again, so an edge missed while a state did not read (a write
// waiting for room, a connect) is reported once the registration changes.
const connEvents = syscall.EPOLLRDHUP | unix.EPOLLET

func (l *evloop) ctl(op int, c *econn, events uint32) error {
	ev := syscall.EpollEvent{Events: events | connEvents, Fd: c.id}
	return syscall.EpollCtl(l.epfd, op, c.fd, &ev)
}

func (l *evloop) closeFD(c *econn) {
	if c.fd >= 0 {
		if l.ring != nil {
			l.ringClose(c)
		}
		syscall.Close(c.fd) // closing also removes it from the epoll set
		c.fd = -1
		c.gen++ // what still refers to the old socket (a ring completion, a read loop) sees it closed
	}
	c.pending, c.carry, c.out, c.queued = nil, c.carry[:0], false, false
}

// finish ends c for good.
func (l *evloop) finish(c *econn) {
	if c.state == cDone {
		return
	}
	l.closeFD(c)
	c.state = cDone
	l.active--
}

func (l *evloop) close() {
	l.samples.flush(l.e.now())
	for _, c := range l.conns {
		l.closeFD(c)
	}
	if l.o != nil {
		l.o.close()
	}
	l.file.Close()
}
