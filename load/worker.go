package load

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
)

// workerBatch is a goroutine worker's batch size: small, because every connection holds one.
const workerBatch = 16

// readBufSize is the size of the pooled buffers reads go into: a connection holds a buffer
// only while bytes are arriving, so idle connections cost no buffer memory.
const readBufSize = 32 << 10

var readBufs = sync.Pool{New: func() any { b := make([]byte, readBufSize); return &b }}

// worker owns one connection slot and its goroutine.
type worker struct {
	e        *engine
	inFlight atomic.Bool // open loop: a request is in flight (written by this worker only)
	id       int
	th       int // engine thread
	req      scenario.Requester
	dialed   chan dialResult                           // replies from the dialer pool
	dialFn   func() (net.Conn, syscall.RawConn, error) // dials instead of the pool (an HTTP/2 loop's connection)
	watch    scenario.ResponseWatcher
	delay    scenario.Delayer
	budget   int64 // requests left; -1: until stopped
	gaveUp   bool  // the connection could not be opened for a limit of the generator's machine

	mu sync.Mutex // guards nc against interrupt
	nc net.Conn
	rc syscall.RawConn // plain TCP: reads go through the poller without a per-connection buffer

	deadline int64 // current I/O deadline, as an offset from e.base
	wireRead       // reading and parsing responses
	samples  sampleBatch
	x        explainer
}

// wireRead is how a worker reads and parses its responses.
type wireRead struct {
	p       parser
	readFn  func(fd uintptr) bool // made once so reads do not allocate
	rerr    error
	rbytes  int64
	carry   []byte // bytes read past the end of a response (pipelining)
	capture []byte // the whole response, when the requester watches responses
	tlsBuf  []byte
}

func newWorker(e *engine, id int, req scenario.Requester) *worker {
	w := &worker{e: e, id: id, th: id % len(e.recs), req: req, dialed: make(chan dialResult, 1),
		samples: newSampleBatch(e.recs[id%len(e.recs)], workerBatch)}
	w.watch, _ = req.(scenario.ResponseWatcher)
	w.delay, _ = req.(scenario.Delayer)
	w.readFn = w.readRaw
	w.x, w.p.metric = newExplainer(id, req), e.recs[w.th].Metric
	return w
}

// closedLoop sends a request, waits for its response, and repeats until stopped or out of budget.
func (w *worker) closedLoop() {
	defer w.end()
	for w.budget != 0 && w.sending() {
		if w.delay != nil {
			if !w.sleep(w.delay.Delay()) {
				return
			}
		}
		raw, n, ep, head := w.req.Request()
		if !w.sending() {
			return // the run ended while the request was made (a script's request())
		}
		start := w.e.now() // without keep-alive the connect is part of every request
		if w.nc == nil && (!w.connect(n, ep) || !w.sending()) {
			continue // the loop condition ends it if sending stopped during the dial
		}
		now := w.e.now()
		if w.e.closed(now) {
			return
		}
		if !w.e.cfg.NoKeepAlive {
			start = now
		}
		w.exchange(raw, n, ep, head, start, start)
		if w.e.cfg.NoKeepAlive {
			w.closeConn()
		}
	}
}

// sending reports whether the worker may send: the run goes on and its thread was not
// stopped by a script.
func (w *worker) sending() bool { return !w.e.stop.Load() && !w.e.threadStop[w.th].Load() }

// sleep waits d unless the run stops first.
func (w *worker) sleep(d time.Duration) bool {
	for d > 0 && w.sending() {
		step := min(d, 50*time.Millisecond)
		time.Sleep(step)
		d -= step
	}
	return w.sending()
}

// dial opens a connection: through dialFn when set, else through the dialer pool.
func (w *worker) dial() (net.Conn, syscall.RawConn, error) {
	if w.dialFn != nil {
		return w.dialFn()
	}
	return w.e.dial.viaPool(w.e.ctx, w.dialed)
}

// connect opens the connection; a failure is recorded as n connect errors.
func (w *worker) connect(n, ep int) bool {
	t0 := w.e.now()
	nc, rc, err := w.dial()
	if err != nil {
		if w.e.cancel.Load() || w.e.stop.Load() {
			// Cut short by the end of the run: not an attempt at the target.
			w.budget = 0
			return false
		}
		if w.e.limited(err) {
			// A limit of apiperf's own machine: the connection is given up, and the failure
			// is not an attempt at the target.
			w.budget, w.gaveUp = 0, true
			return false
		}
		now := w.e.now()
		w.recordN(n, measure.Sample{Done: now, Class: measure.ConnectError, Endpoint: uint8(ep)})
		return false
	}
	w.e.conns.Add(1)
	w.e.connTime.Add(w.e.now() - t0)
	w.mu.Lock()
	w.nc, w.rc = nc, rc
	w.mu.Unlock()
	if w.e.cancel.Load() {
		w.interrupt()
	}
	w.deadline = 0
	w.carry = w.carry[:0]
	return true
}

// exchange writes one request batch and reads its n responses. due is when the request
// should have been sent (open loop), start when it was.
func (w *worker) exchange(raw []byte, n, ep int, head bool, due, start int64) {
	w.arm(start)
	if _, err := w.nc.Write(raw); err != nil {
		class := measure.WriteError
		if isTimeout(err) {
			class = measure.TimeoutError
		}
		w.fail(n, ep, class, due, start)
		return
	}
	for k := 0; k < n; k++ {
		err := w.readResponse(head, start)
		end := w.e.now()
		if err != nil {
			w.fail(n-k, ep, w.e.classify(err), due, start)
			return
		}
		if k == n-1 && len(w.carry) > 0 && !w.p.close && !w.p.untilEOF {
			// Bytes past the last response asked for (a second response, garbage): the
			// exchange is a protocol error and the connection is not trusted again.
			w.fail(1, ep, measure.ProtocolError, due, start)
			return
		}
		s := measure.Sample{Done: end, Latency: end - due, Bytes: int32(min(w.rbytes, 1<<31-1)), Status: int16(w.p.status), Class: measure.Response, Endpoint: uint8(ep)}
		if w.e.cfg.OpenLoop() {
			s.Uncorrected = end - start
		}
		w.x.explain(&s, k, &w.p.timing, &w.samples)
		w.p.stream(&s, &w.samples, due)
		if w.watch != nil && !w.watched() {
			return
		}
		w.record(s)
		if w.p.close || w.p.untilEOF {
			w.closeConn()
			if k < n-1 {
				w.fail(n-k-1, ep, measure.ReadError, due, start)
			}
			return
		}
	}
}

// watched passes the response just read to the script and acts on what it says; false
// when the script's thread had already been stopped by another connection: then the
// response is not seen (nor recorded), as wrk's stopped event loop never reads it.
func (w *worker) watched() bool {
	header, body := splitCapture(w.capture)
	switch w.watch.Response(w.p.status, header, body) {
	case scenario.StopThread:
		w.e.stopThread(w.th)
	case scenario.StopRun:
		w.e.stop.Store(true)
	case scenario.Stopped:
		w.e.stopThread(w.th)
		w.closeConn()
		return false
	}
	return true
}

// fail records n failed attempts and drops the connection. An attempt abandoned because
// the run was interrupted is not an error of the target and is not recorded.
func (w *worker) fail(n, ep int, class measure.Class, due, start int64) {
	w.closeConn()
	if w.e.cancel.Load() {
		w.budget = 0
		return
	}
	now := w.e.now()
	w.recordN(n, measure.Sample{Done: now, Latency: now - due, Uncorrected: now - start, Class: class, Endpoint: uint8(ep)})
}

// arm makes sure the connection's deadline is at least timeout after start. Deadlines are
// moved only when they would fire early, so a timeout is noticed at most e.slack late and
// the timer is not reset on every request.
func (w *worker) arm(start int64) {
	need := start + int64(w.e.timeout)
	if w.deadline >= need {
		return
	}
	w.deadline = need + int64(w.e.slack)
	_ = w.nc.SetDeadline(w.e.base.Add(time.Duration(w.deadline)))
}

func isTimeout(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

// classify is the class of a failed exchange's err; a header line too long is counted, so
// the step says why its protocol errors were.
func (t *tally) classify(err error) measure.Class {
	switch {
	case isTimeout(err):
		return measure.TimeoutError
	case errors.Is(err, errLongLine):
		t.longLine.Add(1)
		return measure.ProtocolError
	case errors.Is(err, errProtocol):
		return measure.ProtocolError
	}
	return measure.ReadError
}

// readResponse reads one whole response; w.p holds its status and w.rbytes its size.
func (w *worker) readResponse(head bool, start int64) error {
	w.p.reset(head)
	w.rbytes = 0
	w.rerr = nil
	w.capture = w.capture[:0]
	if len(w.carry) > 0 {
		used, err := w.feed(w.carry)
		w.keep(w.carry[:used])
		w.rbytes += int64(used)
		w.carry = w.carry[:copy(w.carry, w.carry[used:])]
		if err != nil {
			return err
		}
		if w.p.done() {
			return nil
		}
	}
	for {
		var err error
		if w.rc != nil {
			err = w.rc.Read(w.readFn)
			if err == nil {
				err = w.rerr
			}
		} else {
			err = w.readTLS()
		}
		if err == nil {
			return nil
		}
		if isTimeout(err) && !w.e.cancel.Load() && w.e.now()-start < int64(w.e.timeout) {
			// The deadline fired before this request's timeout: move it and go on waiting.
			w.deadline = 0
			w.arm(start)
			continue
		}
		return err
	}
}

// readRaw is the RawConn read callback: it reads what is there into a pooled buffer and
// parses it. It returns false to wait for more bytes, only after a read said EAGAIN.
func (w *worker) readRaw(fd uintptr) bool {
	bp := readBufs.Get().(*[]byte)
	defer readBufs.Put(bp)
	buf := *bp
	for {
		n, err := syscall.Read(int(fd), buf)
		switch {
		case err == syscall.EAGAIN:
			return false
		case err == syscall.EINTR:
			continue
		case err != nil:
			w.rerr = err
			return true
		case n == 0:
			w.rerr = w.atEOF()
			return true
		}
		if w.consume(buf[:n]) {
			return true
		}
		// Read again rather than wait: readiness that arrived with these bytes (the peer's
		// FIN, say) was already consumed, so only EAGAIN proves there is nothing more.
	}
}

// readTLS reads through the TLS connection until the response is complete.
func (w *worker) readTLS() error {
	if w.tlsBuf == nil {
		w.tlsBuf = make([]byte, 16<<10)
	}
	for {
		n, err := w.nc.Read(w.tlsBuf)
		if n > 0 && w.consume(w.tlsBuf[:n]) {
			return w.rerr
		}
		if err == io.EOF {
			return w.atEOF()
		}
		if err != nil {
			var re tls.RecordHeaderError
			if errors.As(err, &re) {
				return errProtocol
			}
			return err
		}
	}
}

// consume feeds bytes to the parser; it reports whether reading should end (done or failed).
func (w *worker) consume(b []byte) bool {
	used, err := w.feed(b)
	w.rbytes += int64(used)
	w.keep(b[:used])
	if err != nil {
		w.rerr = err
		return true
	}
	if w.p.done() {
		if used < len(b) {
			w.carry = append(w.carry, b[used:]...)
		}
		return true
	}
	return false
}

// feed parses b, timing the events of an event stream it completes.
func (w *worker) feed(b []byte) (int, error) {
	before := w.p.events
	used, err := w.p.feed(b)
	if w.p.events != before {
		w.p.times.arrived(&w.samples, before, w.p.events, w.e.now(), int64(w.e.from))
	}
	return used, err
}

func (w *worker) keep(b []byte) {
	if w.watch != nil {
		w.capture = append(w.capture, b...)
	}
}

// atEOF is what the connection closing means for the response being read.
func (w *worker) atEOF() error {
	if w.p.eof() {
		return nil
	}
	return io.ErrUnexpectedEOF
}

func (w *worker) record(s measure.Sample) {
	if w.budget > 0 {
		w.budget--
	}
	w.samples.add(s)
}

func (w *worker) recordN(n int, s measure.Sample) {
	for i := 0; i < n; i++ {
		w.record(s)
	}
}

func (w *worker) closeConn() {
	w.mu.Lock()
	if w.nc != nil {
		w.nc.Close()
	}
	w.nc, w.rc = nil, nil
	w.mu.Unlock()
	w.carry = w.carry[:0]
}

// interrupt makes a blocked read or write on the connection return now.
func (w *worker) interrupt() {
	w.mu.Lock()
	if w.nc != nil {
		_ = w.nc.SetDeadline(time.Unix(1, 0))
	}
	w.mu.Unlock()
}

func (w *worker) end() {
	w.samples.flush(w.e.now())
	w.closeConn()
}

// splitCapture splits a captured raw response into its header block and its body, with a
// chunked body decoded.
func splitCapture(raw []byte) (header, body []byte) {
	i := indexHeaderEnd(raw)
	if i < 0 {
		return raw, nil
	}
	header, body = raw[:i], raw[i:]
	if hasChunked(header) {
		body = dechunk(body)
	}
	return header, body
}
