//go:build linux

package load

import (
	"syscall"
	"time"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
)

const evloopSupported = true

// An evloop runs the connections of one engine thread, as wrk does: no goroutine and no read
// buffer per connection, a read only when the backend says a response has arrived, and the
// next request written as soon as it may be: at once in a closed loop (closedLoop,
// evclosed_linux.go), when it is due in an open loop (openLoop, evopen_linux.go). Its I/O
// goes through the poller choosePoller gives it: epoll (evepoll_linux.go), whose connections are
// edge-triggered, so each event is read until the socket is drained (see read), or an io_uring
// where the kernel allows it (evring_linux.go). It serves HTTP/1.1 over TCP and over TLS (evtls_linux.go) without
// scripts that watch responses or delay requests; HTTP/2 has loops of its own (h2loop_linux.go),
// and everything else runs on the goroutine workers.
type evloop struct {
	e        *engine
	ep       *epoller // the loop's epoll set (the backend, unless io uses a ring)
	io       poller   // the backend in use: ep, or an io_uring (startRing)
	conns    []*econn
	active   int // connections not finished
	retry    retryList
	samples  sampleBatch
	buf      []byte // one read buffer for all the loop's connections
	sa       syscall.Sockaddr
	family   int
	scan     int64 // how often deadlines are checked, ns
	lastScan int64
	kind     evkind      // closed or open loop
	ring     *ringChoice // whether the run asked for io_uring, and where a refused one is noted
	shakes   tlsQueue    // TLS: the handshakes in progress, and the connections waiting to start one
	streamed bool        // it read an event stream: it reads on arrival from then on (evstream_linux.go)
}

// evkind is what differs between the closed loop (closedLoop) and the open loop (openLoop) on
// an event loop: the loop's connection code calls it and never asks which kind runs.
type evkind interface {
	connected(c *econn)                 // c just connected
	connectFailed(c *econn, err error)  // c's connect failed (err, nil when unknown) or timed out
	freed(c *econn, now bool)           // c's requests are all answered or failed (now false: after a failure)
	idle(c *econn) bool                 // c, with no request, got bytes or its end: true when handled
	read(c *econn) (int, syscall.Errno) // reads what arrived for c into the loop's buffer
	took(d int64)                       // an exchange held its connection d ns
	broken()                            // the backend failed: nothing more is sent
}

// poller is an event loop's I/O backend, as wrk's ae_epoll.c is for ae.c: the loop's code
// calls it and never asks which backend runs. It only waits and does I/O; how long to wait is
// the loop's (the open loop's pause, evwake_linux.go). epoll is evepoll_linux.go, io_uring
// evring_linux.go; a new backend is one more file implementing these and a case in choosePoller.
type poller interface {
	connecting(c *econn) error // watch c's socket until its connect completes
	connected(c *econn) error  // watch c's newly connected socket for responses
	write(c *econn) bool       // send c.pending; false: it waits (for room, a send in flight) or failed
	written(c *econn)          // c's request is all sent: it now waits for its response
	closing(c *econn)          // c's socket is about to be closed
	turn(d int64)              // closed loop: one wait, up to d ns (0: none), and what it brought
	pause(p pause) wakeup      // open loop: wait as p says, handle what came, and say how it went
}

// choosePoller gives the loop its backend, with a file slot for each of up to files
// connections (st: receives carry their kernel timestamps, noted there): an io_uring where the
// run asked for one and the kernel allows it, else the loop's epoll set. It returns what undoes
// the choice. A new backend is one more case here.
func (l *evloop) choosePoller(files int, st *stampState) func() {
	l.io = l.ep
	if l.ring != nil && l.ring.on {
		if g, undo := l.startRing(files, st); g != nil {
			l.io = g
			return undo
		}
	}
	return func() {}
}

// econn is one connection of an evloop.
type econn struct {
	id       int32 // index in the loop's conns, kept in the backend's events
	fd       int
	state    uint8
	req      scenario.Requester
	budget   int64 // requests left; -1: until stopped
	p        parser
	pending  []byte    // the part of the request the socket did not take yet
	out      bool      // the backend watches for room (a write is waiting for it)
	carry    []byte    // bytes read past the end of a response (pipelining)
	gen      uint32    // bumped when fd closes (io_uring: completions for the old socket are ignored)
	x        explainer // what its response samples carry besides timing
	tls      *tlsConn  // https: its TLS state (evtls_linux.go); nil on plain TCP
	ebatch             // the requests sent together and their responses
	openConn           // open loop
	ringConn           // io_uring
}

// ebatch is the batch of requests in flight on an econn (more than one when pipelined).
type ebatch struct {
	head     bool
	n, got   int // requests in the batch sent, responses read
	ep       int
	start    int64 // when the batch was sent
	due      int64 // when it was due (open loop; closed loop: start)
	deadline int64
	rbytes   int64
}

// openConn is what an open loop keeps of an econn.
type openConn struct {
	queued bool  // a request waits for the connect to finish
	at     int64 // when the bytes read last arrived, by their kernel timestamp (0: unknown)
	waited bool  // that request waited for a free connection
	sentIn bool  // open loop: that request was sent inside the window (counted in sent)
}

// ringConn is what the io_uring backend keeps of an econn.
type ringConn struct {
	sending bool   // a send is in flight
	sent    []byte // what it sends (kept alive until it completes)
}

const (
	cIdle uint8 = iota
	cConnecting
	cWriting
	cReading
	cDone
	cHandshake // connected, in its TLS handshake
)

// evloopBatch is an event loop's batch size: one batch serves all its connections.
const evloopBatch = 64

// evloopReadBuf is the size of an evloop's read buffer.
const evloopReadBuf = 64 << 10

// makeEvloops makes one loop, without connections, per engine thread (open: with a timer for
// the open loop's waits through the netpoller, and netpoll: those from the start).
func (e *engine) makeEvloops(open, netpoll bool) ([]*evloop, error) {
	sa, family, err := sockaddr(e.ctx, e.target)
	if err != nil {
		return nil, err
	}
	loops := make([]*evloop, len(e.recs))
	for t := range loops {
		l := &evloop{
			e: e, samples: newSampleBatch(e.recs[t], evloopBatch),
			buf: make([]byte, evloopReadBuf), sa: copySockaddr(sa), family: family,
			scan: int64(min(e.slack, 10*time.Millisecond)),
		}
		l.scan = max(l.scan, int64(time.Millisecond))
		if l.ep, err = newEpoller(l, open, netpoll); err != nil {
			closeLoops(loops[:t])
			return nil, err
		}
		l.io = l.ep
		loops[t] = l
	}
	return loops, nil
}

func closeLoops(loops []*evloop) {
	for _, l := range loops {
		l.ep.close()
	}
}

// event handles what the backend reported for c (hup: the peer hung up, or the socket failed).
func (l *evloop) event(c *econn, hup bool) {
	switch c.state {
	case cConnecting:
		soerr, err := syscall.GetsockoptInt(c.fd, syscall.SOL_SOCKET, syscall.SO_ERROR)
		if err != nil || soerr != 0 {
			l.fail(c, measure.ConnectError)
			return
		}
		if err := l.io.connected(c); err != nil {
			l.fail(c, measure.ConnectError)
			return
		}
		if c.tls != nil {
			l.handshake(c) // the connect ends with it
			return
		}
		l.opened(c)
	case cHandshake:
		l.tlsEvent(c, hup)
	case cIdle:
		if c.tls != nil {
			l.read(c, hup) // what TLS sends after its handshake (a session ticket) is not a response
			return
		}
		l.kind.idle(c) // open loop: a free connection became readable
	case cWriting:
		l.write(c)
	case cReading:
		l.read(c, hup)
	}
}

// opened counts c's connect, just completed (its handshake too on TLS), and starts using it.
func (l *evloop) opened(c *econn) {
	l.e.conns.Add(1)
	l.e.connTime.Add(l.e.now() - c.start)
	c.state = cIdle
	l.kind.connected(c)
}

// newSocket makes a non-blocking TCP socket, with TCP_NODELAY, for the target: every
// connection of an event loop starts here.
func (l *evloop) newSocket() (int, error) {
	fd, err := syscall.Socket(l.family, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	_ = syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
	if err := bindSource(fd, l.e.nextLocalAddr()); err != nil {
		syscall.Close(fd)
		return -1, err
	}
	return fd, nil
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
	fd, err := l.newSocket()
	if err != nil {
		l.kind.connectFailed(c, err)
		return
	}
	c.fd = fd
	c.start = l.e.now()
	c.deadline = c.start + int64(l.e.timeout)
	switch err := syscall.Connect(fd, l.sa); err {
	case nil, syscall.EINPROGRESS:
		c.state = cConnecting
		if err := l.io.connecting(c); err != nil {
			l.kind.connectFailed(c, err)
		}
	default:
		l.kind.connectFailed(c, err)
	}
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
	c.setRequest(raw)
	c.state = cWriting
	l.write(c)
}

// write hands what is left of the request to the backend; once it is all sent (or, on an
// io_uring, queued), c waits for its response.
func (l *evloop) write(c *econn) {
	for ok := true; ok; ok = c.tls != nil && len(c.tls.mem.out) > 0 && !c.sending {
		if c.tls != nil && !l.seal(c) || !l.io.write(c) {
			return
		}
	}
	if c.state == cWriting && c.n > 0 {
		c.state = cReading
		l.io.written(c)
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
func (l *evloop) read(c *econn, hup bool) {
	gen := c.gen
	for {
		n, err := l.kind.read(c)
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
// close it (evkind.idle).
func (l *evloop) received(c *econn, b []byte, err syscall.Errno) {
	if c.tls != nil && err != syscall.EAGAIN && err != syscall.EINTR {
		l.tlsReceived(c, b, err) // its records opened, the plaintext comes back to deliver
		return
	}
	l.deliver(c, b, err)
}

// deliver is received for bytes in the clear.
func (l *evloop) deliver(c *econn, b []byte, err syscall.Errno) {
	switch {
	case err == syscall.EAGAIN || err == syscall.EINTR:
		return
	case c.state == cIdle && l.kind.idle(c):
		return // a free connection of an open loop: closed by the server, or sent what nobody asked for
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
		used, err := l.feed(c, b)
		c.rbytes += int64(used)
		if err != nil {
			l.fail(c, l.e.classify(err))
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
	c.x.explain(&s, c.got, &c.p.timing, &l.samples)
	c.p.stream(&s, &l.samples, c.due)
	l.record(c, s)
	c.got++
	if c.p.close || c.p.untilEOF {
		l.closeFD(c)
		if c.got < c.n {
			l.failRest(c, measure.ReadError, now)
		}
		c.state = cIdle
		l.kind.freed(c, true)
		return true
	}
	if c.got < c.n {
		c.p.reset(c.head)
		c.rbytes = 0
		return false
	}
	c.state = cIdle
	l.kind.freed(c, true)
	return true
}

// fail records c's outstanding requests as failed, drops the connection and tries again.
func (l *evloop) fail(c *econn, class measure.Class) {
	if c.state == cConnecting || c.state == cHandshake {
		l.kind.connectFailed(c, nil)
		return
	}
	now := l.e.now()
	l.closeFD(c)
	if !l.e.cancel.Load() {
		l.failRest(c, class, now)
	}
	c.state = cIdle
	l.kind.freed(c, false)
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
			l.kind.connectFailed(c, nil)
		case c.state == cHandshake && now > c.deadline:
			l.tlsFailed(c, errHandshakeTimeout)
		case (c.state == cReading || c.state == cWriting) && now > c.deadline:
			l.fail(c, measure.TimeoutError)
		}
	}
}

func (l *evloop) record(c *econn, s measure.Sample) {
	if c.budget > 0 {
		c.budget--
	}
	l.kind.took(s.Uncorrected)
	l.samples.add(s)
}

func (l *evloop) closeFD(c *econn) {
	if c.fd >= 0 {
		l.io.closing(c)
		syscall.Close(c.fd) // closing also removes it from an epoll set
		c.fd = -1
		c.gen++ // what still refers to the old socket (a ring completion, a read loop) sees it closed
	}
	c.pending, c.carry, c.out, c.queued = nil, c.carry[:0], false, false
	if c.tls != nil {
		l.tlsClosed(c)
	}
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
	l.ep.close()
}
