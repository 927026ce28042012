//go:build linux

package load

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"io"
	"iter"
	"math"
	"net"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/apiperf/apiperf/measure"
)

// TLS on the event loop. The loop keeps doing every socket operation (connect, send, receive,
// on epoll or io_uring); crypto/tls runs over an in-memory connection (memConn) that the loop
// feeds with the ciphertext it received and drains of the ciphertext TLS wrote, as wrk drives
// OpenSSL over memory BIOs of its own sockets.
//
// The handshake is stepped by the loop: it runs in a coroutine (iter.Pull) that only runs
// while the loop waits for it, from one socket event to the next. When the handshake wants
// bytes that have not arrived, memConn's Read yields back to the loop, which sends what TLS
// wrote and returns to its wait; when bytes arrive, the loop resumes the coroutine with them.
// No goroutine runs beside the loop (the coroutine's stack holds the handshake's state, the
// way OpenSSL's SSL object holds it for wrk), and a handshake's crypto takes the loop's
// thread as SSL_do_handshake takes wrk's. After the handshake, records are read without a
// coroutine: memConn's Read says "would block" with a temporary net.Error, which crypto/tls
// does not make sticky, so the loop decrypts what arrived and returns.
//
// Sessions are resumed as wrk does: one ClientSessionCache per run (the dialer's config), so
// a reconnect resumes the session of an earlier connection. The handshake is part of the
// connect: it counts in the connect time, its timeout is the connect's, and a failed
// handshake is a connect error whose reason the run's TLS warning names (tlsfail.go).

// tlsConn is the TLS state of one econn of a run on https.
type tlsConn struct {
	tc      *tls.Conn
	mem     memConn
	next    func() (struct{}, bool) // resumes the handshake's coroutine
	stop    func()                  // ends it (the connection closed before it finished)
	herr    error                   // the handshake's result
	ready   bool                    // the handshake is done: records may be sealed and opened
	waiting bool                    // connected, waiting for its turn to shake hands (tlsQueue)
	req     []byte                  // the request waiting to be sealed (plaintext)
	keys    keyLog                  // the handshake's secrets, for the opener
	open    *opener                 // opens the server's records after the handshake (nil: crypto/tls does)
}

// Counts of the event loops' TLS handshakes, and of those that resumed a session (tests
// check the path was taken and that sessions are reused).
var tlsLoopHandshakes, tlsLoopResumed, tlsLoopOpeners atomic.Int64

// errHandshakeTimeout is the reason noted for a handshake that did not end by its deadline.
var errHandshakeTimeout = context.DeadlineExceeded

// newTLSConn gives a connection of a TLS run its state (nil for plain TCP).
func (l *evloop) newTLSConn() *tlsConn {
	if l.e.dial.tls == nil {
		return nil
	}
	return &tlsConn{}
}

// tlsQueue bounds the handshakes a loop runs at once, as the dialer's pool bounds the
// goroutine path's: a thousand connections shaking hands at once would all pass their
// deadline while the server (and the loop) work through them, and start again. A connection
// that waits for its turn is connected, in cHandshake, without a deadline.
type tlsQueue struct {
	wait []*econn
}

// maxHandshakes is how many handshakes a loop runs at once: the dialer pool's size shared by
// the run's loops.
func (l *evloop) maxHandshakes() int { return max(maxDialers/len(l.e.recs), 8) }

// handshake starts c's TLS handshake on its just connected socket, or queues it when the loop
// runs its most already (startHandshakes starts it).
func (l *evloop) handshake(c *econn) {
	c.state = cHandshake
	c.tls.mem.reset() // from here on it keeps what arrives (a waiting one's end of stream too)
	if len(l.shakes.wait) > 0 || l.shaking() >= l.maxHandshakes() {
		c.tls.waiting = true
		c.deadline = math.MaxInt64
		l.shakes.wait = append(l.shakes.wait, c)
		return
	}
	l.startHandshake(c)
}

// startHandshakes starts the waiting handshakes the loop has room for (called once a turn).
// When the run has stopped, the waiting connections end instead (not attempts at the target).
func (l *evloop) startHandshakes() {
	if len(l.shakes.wait) == 0 {
		return
	}
	stopped := l.e.stop.Load() || l.e.cancel.Load()
	for n := l.shaking(); len(l.shakes.wait) > 0 && (stopped || n < l.maxHandshakes()); {
		c := l.shakes.wait[0]
		l.shakes.wait = l.shakes.wait[1:]
		switch {
		case !c.tls.waiting || c.state != cHandshake:
		case stopped:
			c.tls.waiting = false
			l.kind.connectFailed(c, nil)
		default:
			l.startHandshake(c)
			n++
		}
	}
	if len(l.shakes.wait) == 0 {
		l.shakes.wait = l.shakes.wait[:0:0] // let the backing array go
	}
}

// shaking counts the loop's handshakes in progress.
func (l *evloop) shaking() int {
	n := 0
	for _, c := range l.conns {
		if c.state == cHandshake && c.tls.next != nil {
			n++
		}
	}
	return n
}

// tlsClosed drops c's TLS state as its socket closes (a handshake in progress ends).
func (l *evloop) tlsClosed(c *econn) {
	c.tls.waiting = false
	c.tls.reset()
}

// startHandshake runs the first step of c's handshake: the coroutine writes the ClientHello,
// which is sent, and yields until the server's answer arrives.
func (l *evloop) startHandshake(c *econn) {
	t := c.tls
	t.waiting = false
	cfg := l.e.dial.tls.Clone() // the run's session cache with it
	cfg.KeyLogWriter = &t.keys
	if cfg.ClientSessionCache != nil {
		cfg.ClientSessionCache = &resumeCache{ClientSessionCache: cfg.ClientSessionCache, secrets: &l.e.dial.secrets, keys: &t.keys}
	}
	t.tc = tls.Client(&t.mem, cfg)
	t.herr, t.ready = nil, false
	t.next, t.stop = iter.Pull(t.run)
	c.deadline = l.e.now() + int64(l.e.timeout) // as the goroutine path: the dial's timeout, then the handshake's
	l.shake(c)
}

// run is the handshake's coroutine.
func (t *tlsConn) run(yield func(struct{}) bool) {
	t.mem.yield = yield
	t.herr = t.tc.Handshake()
	t.mem.yield = nil
}

// shake resumes c's handshake with what arrived, sends what it wrote, and when it is over
// opens c for requests or fails its connect.
func (l *evloop) shake(c *econn) {
	t := c.tls
	if t.next == nil {
		return // waiting for its turn: what arrived (an end of stream) is read when it starts
	}
	_, more := t.next()
	gen := c.gen
	l.write(c)
	if more || c.gen != gen {
		return // it waits for the server, or the send failed (and closed c)
	}
	t.next, t.stop = nil, nil
	if t.herr != nil {
		l.tlsFailed(c, t.herr)
		return
	}
	t.ready = true
	state := t.tc.ConnectionState()
	tlsLoopHandshakes.Add(1)
	if state.DidResume {
		tlsLoopResumed.Add(1)
	}
	if t.keys.clientRandom == nil {
		t.keys.clientRandom = t.mem.clientRandom() // a resumed TLS 1.2 session logs none
	}
	if t.open = newOpener(state, &t.keys, t.mem.serverRandom()); t.open != nil {
		tlsLoopOpeners.Add(1)
		if rest := t.mem.in[t.mem.off:]; len(rest) > 0 {
			t.open.stage = append(t.open.stage, rest...) // what came after the handshake's last record
		}
		t.mem.in, t.mem.off = nil, 0 // the handshake's flights (the certificates): not kept per connection

	}
	t.keys.reset()
	l.opened(c)
}

// tlsFailed notes why c's handshake failed (unless the run is ending) and fails its connect.
func (l *evloop) tlsFailed(c *econn, err error) {
	if !l.e.stop.Load() && !l.e.cancel.Load() {
		l.e.dial.tlsErr.note(l.e.target.Address, err)
	}
	if out := c.tls.mem.out; len(out) > 0 && c.fd >= 0 && len(c.pending) == 0 && !c.sending {
		_, _ = send(c.fd, out) // the alert that says why (a bad certificate), as crypto/tls would send it
	}
	l.kind.connectFailed(c, nil)
}

// tlsEvent handles a backend event for c while it handshakes: the rest of a write that
// waited for room, and what arrived.
func (l *evloop) tlsEvent(c *econn, hup bool) {
	gen := c.gen
	l.write(c)
	if c.gen == gen && len(c.pending) == 0 {
		l.io.written(c)
	}
	if c.gen == gen && c.state == cHandshake {
		l.read(c, hup)
	}
}

// tlsReceived takes what a read of c gave (b, the end of the stream, or err): during the
// handshake it resumes it; after, it opens the records and hands their plaintext on.
func (l *evloop) tlsReceived(c *econn, b []byte, err syscall.Errno) {
	t := c.tls
	switch {
	case err != 0:
		t.mem.err = err
	case len(b) == 0:
		t.mem.err = io.EOF
	case t.open == nil:
		t.mem.feed(b)
	}
	if c.state == cHandshake {
		l.shake(c)
		return
	}
	if err != 0 {
		l.deliver(c, nil, err)
		return
	}
	if t.open != nil {
		l.openRecords(c, b)
		return
	}
	gen := c.gen
	for c.gen == gen {
		n, rerr := t.tc.Read(l.buf) // b was copied: the loop's buffer takes the plaintext
		if n > 0 {
			l.deliver(c, l.buf[:n], 0)
			if t.mem.off == len(t.mem.in) && t.mem.err == nil {
				return // TLS read a whole record and holds nothing more: reading on would only find that
			}
			continue
		}
		switch rerr {
		case nil:
		case errWouldBlock:
			return
		case io.EOF: // close_notify, or the end of the stream at a record's boundary
			l.deliver(c, nil, 0)
			return
		default:
			l.deliver(c, nil, syscall.EPROTO)
			return
		}
	}
}

// seal encrypts c's waiting request once the handshake is done, and makes what TLS wrote
// c's pending bytes when nothing else is pending or in flight (false: sealing failed, c
// failed).
func (l *evloop) seal(c *econn) bool {
	t := c.tls
	if t.req != nil && t.ready {
		req := t.req
		t.req = nil
		if _, err := t.tc.Write(req); err != nil {
			l.fail(c, measure.WriteError)
			return false
		}
	}
	if len(c.pending) == 0 && !c.sending && len(t.mem.out) > 0 {
		c.pending = t.mem.take()
	}
	return true
}

// setRequest makes raw c's next request: sent as it is on plain TCP, sealed first on TLS.
func (c *econn) setRequest(raw []byte) {
	if c.tls == nil {
		c.pending = raw
		return
	}
	c.tls.req = raw
}

// reset drops c's TLS state when its socket closes; a handshake in progress ends.
func (t *tlsConn) reset() {
	if t.stop != nil {
		t.stop()
		t.next, t.stop = nil, nil
	}
	t.tc, t.req, t.ready, t.open = nil, nil, false, nil
	t.keys.reset()
	t.mem.reset()
}

// memConn is the net.Conn crypto/tls runs over: in holds ciphertext the loop received that
// TLS has not read yet, out what TLS wrote that the loop has not taken. Two output buffers
// alternate, so the one an io_uring send still holds is never written.
type memConn struct {
	in      []byte
	off     int    // how much of in TLS has read
	left    int    // bytes of the current record not given to TLS yet (0: at a record's start)
	records int    // records given to TLS whole
	hello   []byte // the start of the server's first record: its ServerHello, with the server's random
	chello  []byte // the start of the ClientHello: its random
	out     []byte
	wire    [2][]byte
	cur     int
	err     error               // the end of the stream or a read's error, once received
	yield   func(struct{}) bool // during the handshake: back to the loop until bytes arrive
}

// errWouldBlock is memConn's Read after the handshake when no byte is waiting: a temporary
// net.Error, which crypto/tls does not keep as the connection's error.
var errWouldBlock error = wouldBlock{}

type wouldBlock struct{}

func (wouldBlock) Error() string   { return "no more ciphertext received" }
func (wouldBlock) Timeout() bool   { return false }
func (wouldBlock) Temporary() bool { return true }

func (m *memConn) Read(p []byte) (int, error) {
	for m.deliverable() == 0 {
		if m.off == len(m.in) {
			m.in, m.off = m.in[:0], 0
		} else if m.off > 0 {
			m.in, m.off = append(m.in[:0], m.in[m.off:]...), 0 // keep a partial header at the front
		}
		switch {
		case m.err != nil:
			return 0, m.err
		case m.yield == nil:
			return 0, errWouldBlock
		case !m.yield(struct{}{}):
			return 0, net.ErrClosed // the connection closed during the handshake
		}
	}
	n := copy(p, m.in[m.off:m.off+m.deliverable()])
	m.off += n
	m.left -= n
	if m.left == 0 {
		m.records++
	}
	return n, nil
}

// deliverable is how many bytes Read may give now: up to the end of the current record and
// never past it, so crypto/tls holds no byte of a record it has not asked for. A header
// that has not all arrived is not given (Read waits for the rest).
func (m *memConn) deliverable() int {
	avail := len(m.in) - m.off
	if m.left == 0 {
		if avail < recordHeader {
			return 0
		}
		m.left = recordHeader + int(binary.BigEndian.Uint16(m.in[m.off+3:]))
		if m.records == 0 && len(m.hello) == 0 && avail >= helloRandomEnd {
			m.hello = append(m.hello, m.in[m.off:m.off+helloRandomEnd]...)
		}
	}
	return min(avail, m.left)
}

// recordHeader is the length of a TLS record's header.
const recordHeader = 5

// helloRandomEnd is where the server's random ends in its first record: after the record's
// header, the message's type and length (4) and the version (2), 32 bytes.
const helloRandomEnd = recordHeader + 4 + 2 + 32

// serverRandom is the server's random from its ServerHello (nil when it was not seen whole).
func (m *memConn) serverRandom() []byte { return helloRandom(m.hello, 2) }

// clientRandom is the client's random from its ClientHello.
func (m *memConn) clientRandom() []byte { return helloRandom(m.chello, 1) }

// helloRandom is the random of a hello message of type typ at the start of rec (nil: not there).
func helloRandom(rec []byte, typ byte) []byte {
	if len(rec) != helloRandomEnd || rec[0] != recordHandshake || rec[recordHeader] != typ {
		return nil
	}
	return rec[helloRandomEnd-32:]
}

func (m *memConn) Write(p []byte) (int, error) {
	if m.out == nil {
		m.out = m.wire[m.cur][:0]
	}
	if len(m.chello) == 0 && len(p) >= helloRandomEnd {
		m.chello = append(m.chello, p[:helloRandomEnd]...) // the start of the ClientHello
	}
	m.out = append(m.out, p...)
	return len(p), nil
}

// feed adds ciphertext the loop received, after what TLS has not read yet.
func (m *memConn) feed(b []byte) {
	if m.off == len(m.in) {
		m.in, m.off = m.in[:0], 0 // all read: start the buffer over
	}
	m.in = append(m.in, b...)
}

// take hands the loop what TLS wrote and switches to the other buffer.
func (m *memConn) take() []byte {
	b := m.out
	m.wire[m.cur] = b[:0]
	m.cur ^= 1
	m.out = m.wire[m.cur][:0]
	return b
}

func (m *memConn) reset() {
	m.in, m.off, m.left, m.records, m.err, m.hello, m.chello = m.in[:0], 0, 0, 0, nil, m.hello[:0], m.chello[:0]
	if m.out != nil {
		m.out = m.out[:0]
	}
}

func (m *memConn) Close() error                     { return nil }
func (m *memConn) LocalAddr() net.Addr              { return memAddr{} }
func (m *memConn) RemoteAddr() net.Addr             { return memAddr{} }
func (m *memConn) SetDeadline(time.Time) error      { return nil }
func (m *memConn) SetReadDeadline(time.Time) error  { return nil }
func (m *memConn) SetWriteDeadline(time.Time) error { return nil }

type memAddr struct{}

func (memAddr) Network() string { return "tcp" }
func (memAddr) String() string  { return "evloop" }
