package load

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/apiperf/apiperf/measure"
)

// HTTP/2 settings the generator announces: a large receive window, per stream and for the
// connection, so the server is never held back by the generator, and no server push.
const (
	h2Window     = 1 << 30
	h2ReadBuf    = 16 << 10 // per connection: 10,000 connections hold about 400 MB of buffers
	h2WriteBuf   = 8 << 10
	h2MaxFrame   = 1 << 14 // the largest frame the generator accepts (HTTP/2's default)
	h2LastStream = 1<<31 - 1
)

// errNoH2 marks a server that does not speak HTTP/2: the run is refused before any load.
var errNoH2 = errors.New("server does not speak HTTP/2")

// errH2Stopped ends a read when the connection has nothing left to wait for.
var errH2Stopped = errors.New("stopped")

// h2stream is one request in flight on a connection.
type h2stream struct {
	id         uint32
	ep         uint8
	head       bool
	done       bool // final response headers with END_STREAM, or the last DATA
	headers    bool // final (non-1xx) headers seen
	stalled    bool // the body waited for flow control at least once
	status     int
	due, start int64
	bytes      int64
	sendWin    int64
	recvUnack  int64
	body       []byte // request body not yet sent
	req        h2req  // kept for a retry on a new connection
	capHeader  []byte // response header text and body, when the requester watches responses
	capBody    []byte
	tp         h2trace         // the request's trace context (--traceparent), kept for a retry
	timing     measure.Timings // the response's Server-Timing
	msgs       h2msgs          // its messages (gRPC, SSE events) and grpc-status
}

// h2pending is a request waiting for its turn on a connection: a retry, the rest of a
// pipelined batch, or (req nil) a slot whose request is taken from the requester when at comes.
type h2pending struct {
	req   *h2req
	ep    uint8
	due   int64 // open loop: when it was due (latency is measured from it); closed loop: -1
	retry bool
	tp    h2trace
}

// h2conn runs one HTTP/2 connection slot, as a coroutine of its engine thread's event loop
// (h2loop_linux.go) or on a goroutine of its own: it writes requests into free streams and
// reads frames, with read deadlines as its only timer (stream timeouts, the open-loop
// schedule, script delays), so nothing else is woken per request.
type h2conn struct {
	w        *worker // the slot: net.Conn, budget, recorder batch, interruption
	e        *engine
	tr       *h2translator
	sched    *openSchedule // open loop; nil: closed loop
	stats    measure.HTTP2
	active   []*h2stream
	spare    []*h2stream
	queue    []h2pending
	gate     int64 // the next request may not start before this (open loop: its due time; delays)
	gated    bool
	over     bool   // the schedule is over (open loop)
	left     int64  // closed loop: requests left to start (-1: until stopped)
	h2codec         // frames and header blocks
	h2limits        // what the server allows: streams, windows, frame size
	h2timing        // deadlines
	host     h2host // its event loop (nil: a goroutine of its own)
	tpBlock  []byte // a header block with a traceparent field added (--traceparent)

	grpc *measure.GRPC // a gRPC target: its messages (h2grpc.go); nil: plain HTTP/2
}

// h2codec is a connection's framing: framers, buffers, and the header block being decoded.
type h2codec struct {
	fw      *http2.Framer
	fr      *http2.Framer
	bw      *bufio.Writer
	br      *bufio.Reader
	dec     *hpack.Decoder
	hbuf    []byte    // the payload of the HEADERS frame being read
	cur     *h2stream // the stream whose header block is being decoded (nil: one no longer wanted)
	endStrm bool      // the header block being decoded ends its stream
}

// h2limits is what the server allows a connection, and its stream ids.
type h2limits struct {
	nextID  uint32
	limit   int // streams allowed now: min(--streams, the server's MAX_CONCURRENT_STREAMS)
	goaway  bool
	lastID  uint32
	sendWin int64 // connection-level send window
	initWin int64 // the server's initial stream window
	maxOut  int   // largest frame the server accepts
	unacked int64 // received DATA bytes not yet given back to the connection window
}

// h2timing is a connection's deadlines.
type h2timing struct {
	rdl    int64 // current read deadline (offset from e.base); 0: none set
	wdl    int64 // current write deadline
	inRead bool  // a read is blocked in the framer (wake-ups may run)
}

func newH2Conn(e *engine, w *worker, sched *openSchedule) *h2conn {
	c := &h2conn{w: w, e: e, sched: sched, h2limits: h2limits{limit: e.cfg.StreamsPerConn()}}
	c.tr = newH2Translator(e.target.Scheme, e.target.HostHdr)
	c.stats.Streams = c.limit
	if e.target.GRPC {
		c.grpc = &measure.GRPC{Method: e.target.Path}
	}
	w.budget = -1
	return c
}

// setup speaks the connection preface on a fresh connection and waits for the server's
// SETTINGS, so its MAX_CONCURRENT_STREAMS is honoured from the first request.
func (c *h2conn) setup() error {
	if tc, ok := c.w.nc.(*tls.Conn); ok {
		if p := tc.ConnectionState().NegotiatedProtocol; p != "h2" {
			if p == "" {
				p = "none"
			}
			return fmt.Errorf("%w: TLS ALPN did not negotiate h2 (the server chose %s); drop --http2 for HTTP/1.1", errNoH2, p)
		}
	}
	c.bw = bufio.NewWriterSize(c.w.nc, h2WriteBuf)
	c.br = bufio.NewReaderSize(h2reader{c}, h2ReadBuf)
	c.fw = http2.NewFramer(c.bw, nil)
	c.fr = http2.NewFramer(nil, c.br)
	c.fr.SetReuseFrames()
	c.fr.SetMaxReadFrameSize(h2MaxFrame)
	c.dec = hpack.NewDecoder(4096, c.emit) // a new connection starts with a new table
	c.dec.SetMaxStringLength(1 << 20)
	c.active, c.goaway, c.lastID, c.nextID = c.active[:0], false, 0, 1
	c.sendWin, c.initWin, c.maxOut, c.unacked = 65535, 65535, 16384, 0
	c.limit = c.e.cfg.StreamsPerConn()
	c.rdl, c.wdl = 0, 0
	c.armWrite()
	if _, err := c.bw.WriteString(http2.ClientPreface); err != nil {
		return err
	}
	_ = c.fw.WriteSettings(http2.Setting{ID: http2.SettingEnablePush, Val: 0},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: h2Window})
	_ = c.fw.WriteWindowUpdate(0, h2Window-65535)
	if err := c.bw.Flush(); err != nil {
		return err
	}
	c.setReadDeadline(c.e.now() + int64(c.e.timeout))
	f, err := c.fr.ReadFrame()
	if err != nil {
		if errors.Is(err, http2.ErrFrameTooLarge) {
			return fmt.Errorf("%w: it answered the connection preface with something else, likely HTTP/1.x (h2c needs a server that takes HTTP/2 with prior knowledge)", errNoH2)
		}
		return fmt.Errorf("waiting for the server's SETTINGS: %w", err)
	}
	sf, ok := f.(*http2.SettingsFrame)
	if !ok || sf.IsAck() {
		return fmt.Errorf("%w: its first frame was %v, not SETTINGS", errNoH2, f.Header().Type)
	}
	if err := c.settings(sf); err != nil {
		return err
	}
	if c.limit < 1 {
		return errors.New("the server allows no streams (SETTINGS_MAX_CONCURRENT_STREAMS 0)")
	}
	return nil
}

// settings applies the server's SETTINGS and acknowledges them.
func (c *h2conn) settings(sf *http2.SettingsFrame) error {
	err := sf.ForeachSetting(func(s http2.Setting) error {
		switch s.ID {
		case http2.SettingMaxConcurrentStreams:
			c.limit = min(c.e.cfg.StreamsPerConn(), int(min(s.Val, 1<<20)))
			if c.limit < c.e.cfg.StreamsPerConn() && (c.stats.MaxConcurrent == 0 || int(s.Val) < c.stats.MaxConcurrent) {
				c.stats.MaxConcurrent = int(s.Val)
			}
		case http2.SettingInitialWindowSize:
			delta := int64(s.Val) - c.initWin
			c.initWin = int64(s.Val)
			for _, st := range c.active {
				st.sendWin += delta
			}
		case http2.SettingMaxFrameSize:
			c.maxOut = int(s.Val)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return c.fw.WriteSettingsAck()
}

// h2reader is the connection as the framer reads it. A read deadline that fires is a wake-up,
// not an error: streams past their timeout are reset and counted, due requests are sent, and
// the read goes on, so the framer never sees a partial frame cut by a timer.
type h2reader struct{ c *h2conn }

func (r h2reader) Read(p []byte) (int, error) {
	c := r.c
	for {
		n, err := c.w.nc.Read(p)
		if n > 0 || err == nil {
			return n, nil
		}
		if !isTimeout(err) || c.e.cancel.Load() || !c.inRead {
			return 0, err
		}
		c.rdl = 0
		if err := c.wake(); err != nil {
			return 0, err
		}
	}
}

// wake runs when the read deadline fires: it expires streams, starts what is due, and sets
// the next deadline. errH2Stopped means there is nothing left to wait for.
func (c *h2conn) wake() error {
	c.expire()
	if err := c.fill(); err != nil {
		return err
	}
	if err := c.flush(); err != nil {
		return err
	}
	if len(c.active) == 0 && !c.gated {
		return errH2Stopped
	}
	c.arm()
	return nil
}

// expire resets and counts every stream past its timeout.
func (c *h2conn) expire() {
	now := c.e.now()
	for i := 0; i < len(c.active); {
		s := c.active[i]
		if now-s.start < int64(c.e.timeout) {
			i++
			continue
		}
		_ = c.fw.WriteRSTStream(s.id, http2.ErrCodeCancel)
		c.stats.Cancelled++
		c.record(s, measure.TimeoutError, now)
		c.remove(i)
	}
}

// arm sets the read deadline to the next moment something must happen: the oldest stream's
// timeout, or the next request's turn. It is moved only when it would fire late.
func (c *h2conn) arm() {
	next := int64(-1)
	for _, s := range c.active {
		if t := s.start + int64(c.e.timeout); next < 0 || t < next {
			next = t
		}
	}
	if c.gated && len(c.active) < c.limit && (next < 0 || c.gate < next) {
		next = c.gate
	}
	if next >= 0 && (c.rdl == 0 || next < c.rdl) {
		c.setReadDeadline(next)
	}
}

func (c *h2conn) setReadDeadline(at int64) {
	if c.e.cancel.Load() {
		return
	}
	c.rdl = max(at, 1)
	_ = c.w.nc.SetReadDeadline(c.e.base.Add(time.Duration(at)))
}

// armWrite keeps the write deadline at least one timeout ahead (moved at most once per timeout).
func (c *h2conn) armWrite() {
	now := c.e.now()
	if c.wdl-now > int64(c.e.timeout) || c.e.cancel.Load() {
		return
	}
	c.wdl = now + 2*int64(c.e.timeout)
	_ = c.w.nc.SetWriteDeadline(c.e.base.Add(time.Duration(c.wdl)))
}

func (c *h2conn) flush() error {
	if c.bw.Buffered() == 0 {
		return nil
	}
	c.armWrite()
	return c.bw.Flush()
}

// find returns the index of the active stream id, or -1.
func (c *h2conn) find(id uint32) int {
	for i, s := range c.active {
		if s.id == id {
			return i
		}
	}
	return -1
}

func (c *h2conn) remove(i int) {
	s := c.active[i]
	last := len(c.active) - 1
	c.active[i] = c.active[last]
	c.active[last] = nil
	c.active = c.active[:last]
	s.body, s.req = nil, h2req{}
	c.spare = append(c.spare, s)
}

// record counts the end of stream s: a response, or a failure of class.
func (c *h2conn) record(s *h2stream, class measure.Class, now int64) {
	smp := measure.Sample{Done: now, Latency: now - s.due, Class: class, Endpoint: s.ep}
	if c.sched != nil {
		smp.Uncorrected = now - s.start
	}
	if class == measure.Response {
		smp.Bytes = int32(min(s.bytes, 1<<31-1))
		smp.Status = int16(s.status)
		smp.Conn = c.w.x.conn
		c.w.samples.extras(&smp, s.tp.id, &s.timing)
		if s.msgs.timed {
			c.w.samples.stream(&smp, s.msgs.count, s.msgs.times, s.due)
		}
	}
	c.w.samples.add(smp)
}

// sendBodies sends what flow control now allows of request bodies still waiting.
func (c *h2conn) sendBodies() error {
	for _, s := range c.active {
		if len(s.body) > 0 {
			if err := c.sendBody(s); err != nil {
				return err
			}
		}
	}
	return nil
}

// sendBody writes DATA frames of s's body as far as the windows allow.
func (c *h2conn) sendBody(s *h2stream) error {
	for len(s.body) > 0 {
		n := int64(min(len(s.body), c.maxOut))
		n = min(n, s.sendWin, c.sendWin)
		if n <= 0 {
			if !s.stalled {
				s.stalled = true
				c.stats.FlowStalls++
			}
			return nil
		}
		end := int(n) == len(s.body)
		if err := c.fw.WriteData(s.id, end, s.body[:n]); err != nil {
			return err
		}
		s.body = s.body[n:]
		s.sendWin -= n
		c.sendWin -= n
	}
	return nil
}

// failAll ends every stream in flight with class (the connection failed) and drops the
// connection; requests above a GOAWAY's last stream were already requeued.
func (c *h2conn) failAll(err error) {
	class := c.e.classify(err)
	if _, ok := err.(h2WriteError); ok && class != measure.TimeoutError {
		class = measure.WriteError
	}
	var ce http2.ConnectionError
	if errors.As(err, &ce) || isDecodingError(err) {
		class = measure.ProtocolError
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		class = measure.ReadError
	}
	now := c.e.now()
	for i := len(c.active) - 1; i >= 0; i-- {
		s := c.active[i]
		if !c.e.cancel.Load() {
			c.record(s, class, now)
		}
		c.remove(i)
	}
	c.drop()
}

// h2WriteError marks a failure to send (requests, RST_STREAM, WINDOW_UPDATE).
type h2WriteError struct{ err error }

func (e h2WriteError) Error() string { return e.err.Error() }
func (e h2WriteError) Unwrap() error { return e.err }

// isDecodingError reports a header block that does not decode (HPACK): a protocol error.
func isDecodingError(err error) bool {
	var de hpack.DecodingError
	var ie hpack.InvalidIndexError
	return errors.As(err, &de) || errors.As(err, &ie) || errors.Is(err, errNoStatus)
}

// drop closes the connection; the next request opens a new one.
func (c *h2conn) drop() {
	c.w.closeConn()
	c.bw, c.br, c.fw, c.fr = nil, nil, nil, nil
	c.cur = nil
	c.endStrm = false
}
