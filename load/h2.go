package load

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"
	"time"

	"golang.org/x/net/http2"

	"github.com/apiperf/apiperf/measure"
)

// errTranslate marks a request the scenario made that cannot be sent over HTTP/2.
var errTranslate = errors.New("HTTP/2")

// runH2 runs the load over HTTP/2 (h2 over TLS, or h2c with prior knowledge). Each
// connection keeps up to --streams requests in flight (h2conn), on its engine thread's event
// loop (h2loop_linux.go) or, where there is none (APIPERF_IO=goroutines), on a goroutine of
// its own; the closed loop splits an exact request count over the connections; the open
// loop lets every connection with a free stream claim the next request of the schedule, and
// grows the pool as the HTTP/1.1 open loop does. The initial connections are opened and their SETTINGS
// read before the clock starts: a server that does not speak HTTP/2 refuses the run.
func (e *engine) runH2(o options, names []string) (*measure.Step, error) {
	var sched *openSchedule
	if e.cfg.OpenLoop() {
		sched = &openSchedule{pacer: Pacer{Rate: e.cfg.Rate}, limit: e.to, total: e.cfg.Requests}
	}
	ws := &workerSet{e: e}
	e.drv = h2Workers{ws}
	var loops []*h2loop
	if h2loopSupported && o.io != ioGoroutines {
		var err error
		if loops, err = e.makeH2Loops(); err != nil {
			return nil, err
		}
	}
	var (
		mu       sync.Mutex
		conns    []*h2conn
		wg       sync.WaitGroup
		transErr error
		once     sync.Once
	)
	fatal := func(err error) {
		once.Do(func() { transErr = err })
		e.stop.Store(true)
	}
	launch := func(c *h2conn) {
		wg.Add(1)
		if c.host != nil {
			c.host.start()
			return
		}
		go func() {
			defer wg.Done()
			c.run(fatal)
		}()
	}
	spawn := func(connect bool) (*h2conn, error) {
		id := ws.count()
		req, err := e.src.Requester(id%e.cfg.Threads, id)
		if err != nil {
			return nil, fmt.Errorf("connection %d: %w", id, err)
		}
		c := newH2Conn(e, newWorker(e, id, req), sched)
		if loops != nil {
			co := loops[c.w.th].coro(func() { c.run(fatal) }, wg.Done)
			c.host = co
			c.w.dialFn = func() (net.Conn, syscall.RawConn, error) { return co.dialConn(e) }
		}
		if connect {
			if err := c.preconnect(); err != nil {
				return nil, err
			}
		}
		mu.Lock()
		conns = append(conns, c)
		mu.Unlock()
		ws.add(c.w)
		return c, nil
	}
	e.base = time.Now() // deadlines of the handshakes below; the clock starts again after them
	n := e.cfg.Connections
	for i := 0; i < n; i++ {
		c, err := spawn(true)
		if err != nil {
			for _, c := range conns {
				c.w.closeConn()
			}
			closeH2Loops(loops)
			return nil, err
		}
		if sched == nil {
			c.left = -1
			if e.cfg.Requests > 0 {
				// An exact share: N/C each and the remainder to the first N%C connections.
				c.left = e.cfg.Requests / int64(n)
				if int64(i) < e.cfg.Requests%int64(n) {
					c.left++
				}
			}
		}
	}
	var looping sync.WaitGroup
	for _, l := range loops {
		looping.Go(l.run)
	}
	seal := func() {
		for _, l := range loops {
			l.seal()
		}
	}
	e.base = time.Now()
	for _, c := range conns {
		c.rdl, c.wdl = 0, 0 // set against the handshake's clock
		if sched != nil || c.left != 0 {
			launch(c)
		}
	}
	var all sync.WaitGroup
	all.Add(1)
	var starve *starvation
	if sched != nil {
		starve = newStarvation()
		grown := make(chan struct{})
		go func() {
			defer close(grown)
			e.growPool(ws, sched, starve, func(bool) error {
				c, err := spawn(false)
				if err == nil {
					launch(c)
				}
				return err
			})
		}()
		go func() {
			defer all.Done()
			<-grown
			seal()
			wg.Wait()
		}()
	} else {
		seal()
		go func() {
			defer all.Done()
			wg.Wait()
		}()
	}
	e.supervise(&all, o)
	looping.Wait()
	if transErr != nil {
		return nil, transErr
	}
	s := e.finish(names)
	h := &measure.HTTP2{Protocol: "h2c", Streams: e.cfg.StreamsPerConn()}
	if e.target.Scheme == "https" {
		h.Protocol = "h2"
	}
	for _, c := range conns {
		h.Merge(&c.stats)
		s.GRPC = s.GRPC.Merge(c.grpc)
	}
	s.HTTP2 = h
	if h.MaxConcurrent > 0 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("the server allows %d concurrent streams per connection (SETTINGS_MAX_CONCURRENT_STREAMS), fewer than --streams %d: at most %d requests were in flight per connection",
			h.MaxConcurrent, h.Streams, h.MaxConcurrent))
	}
	if sched != nil {
		e.openCounts(s, sched.scheduled.Load(), sched.sent.Load())
		if w := lateWarning(s.Open, s.Open.LateSends, starve.seen, len(ws.all) >= e.cfg.MaxConns(), e.limit.Load() != nil); w != "" {
			s.Warnings = append(s.Warnings, w)
		}
	}
	return s, nil
}

// h2host runs a connection's waits when it is on an HTTP/2 event loop (h2loop_linux.go): its
// start and its sleeps (its dials are its worker's dialFn). nil: the connection runs on a
// goroutine of its own.
type h2host interface {
	start()
	sleepUntil(e *engine, t int64)
}

// h2Workers is the driver of HTTP/2: its connections are workers, on the HTTP/2 event loops'
// coroutines or on goroutines.
type h2Workers struct{ *workerSet }

// gauges: the connections; an open loop's requests in flight are not counted per
// connection here (unknown).
func (d h2Workers) gauges(iv *measure.Interval) {
	iv.Connections = d.count()
	if d.e.cfg.OpenLoop() {
		iv.InFlight = -1
	}
}

// preconnect opens the connection and speaks the HTTP/2 preface before the clock starts.
// A connection that cannot be opened is not an error here (the first request tries again
// and counts it); a server that answers but not in HTTP/2 is.
func (c *h2conn) preconnect() error {
	t0 := time.Now()
	nc, rc, err := c.w.dial()
	if err != nil {
		return nil
	}
	c.e.conns.Add(1)
	c.e.connTime.Add(int64(time.Since(t0)))
	c.w.nc, c.w.rc = nc, rc
	if err := c.setup(); err != nil {
		c.drop()
		return fmt.Errorf("HTTP/2 with %s: %w", c.e.target.Address, err)
	}
	return nil
}

// run is the connection's loop: start what is due, flush, read a frame, until the budget or
// the schedule is over (or the run stops) and nothing is left in flight.
func (c *h2conn) run(fatal func(error)) {
	defer c.w.end()
	for !c.e.cancel.Load() {
		err := c.fill()
		if err == nil && c.bw != nil && !c.frameReady() {
			err = c.flush() // only before a read that may block: one write for many requests
		}
		if err != nil {
			if errors.Is(err, errTranslate) {
				fatal(err)
				return
			}
			c.failAll(h2WriteError{err})
			continue
		}
		if len(c.active) == 0 {
			if !c.gated {
				return // nothing in flight, nothing queued, nothing more to take
			}
			if c.w.nc == nil {
				c.sleep()
				continue
			}
		}
		c.arm()
		c.inRead = true
		err = c.readFrame()
		c.inRead = false
		if err != nil {
			if errors.Is(err, errTranslate) {
				fatal(err)
				return
			}
			if errors.Is(err, errH2Stopped) {
				c.drop()
				continue
			}
			c.failAll(err)
		}
	}
}

// frameReady reports whether a whole frame is already buffered (reading it will not block).
func (c *h2conn) frameReady() bool {
	n := c.br.Buffered()
	if n < 9 {
		return false
	}
	h, _ := c.br.Peek(3)
	return n >= 9+(int(h[0])<<16|int(h[1])<<8|int(h[2]))
}

// sleep waits for the gate without a connection to read from, in short steps so the end of
// the run is noticed.
func (c *h2conn) sleep() {
	if c.host != nil {
		c.host.sleepUntil(c.e, c.gate)
		return
	}
	wait := min(time.Duration(c.gate-c.e.now()), 50*time.Millisecond)
	if wait <= 0 {
		return
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
	case <-c.e.ctx.Done():
	}
}

// fill starts requests while streams are free and requests are due. Called inside a read
// (a wake-up), it never replaces the connection.
func (c *h2conn) fill() error {
	for len(c.active) < c.limit {
		if c.w.nc != nil && (c.goaway || c.nextID >= h2LastStream-1) {
			if len(c.active) > 0 || c.inRead {
				return nil // no new streams here: wait for these, then a new connection
			}
			c.drop()
		}
		p, ok, err := c.take()
		if err != nil || !ok {
			return err
		}
		if c.w.nc == nil && !c.open(p) {
			continue
		}
		if err := c.start(p); err != nil {
			return err
		}
	}
	return nil
}

// take returns the next request to start now: retries and the rest of a pipelined batch
// first; then, once its turn has come, the next request of the schedule (open loop) or of
// the budget after the script's delay (closed loop).
func (c *h2conn) take() (h2pending, bool, error) {
	if len(c.queue) > 0 {
		p := c.queue[0]
		c.queue = c.queue[:copy(c.queue, c.queue[1:])]
		return p, true, nil
	}
	now := c.e.now()
	if !c.w.sending() || c.w.gaveUp || c.e.closed(now) {
		c.gated = false
		return h2pending{}, false, nil
	}
	if !c.gated {
		switch {
		case c.sched != nil:
			if c.over {
				return h2pending{}, false, nil
			}
			_, due, ok := c.sched.claim()
			if !ok {
				c.over = true
				return h2pending{}, false, nil
			}
			c.gate, c.gated = int64(due), true
		case c.left == 0:
			return h2pending{}, false, nil
		case c.w.delay != nil:
			if d := c.w.delay.Delay(); d > 0 {
				c.gate, c.gated = now+int64(d), true
			}
		}
	}
	due := int64(-1)
	if c.gated {
		if c.gate > now {
			return h2pending{}, false, nil
		}
		c.gated = false
		if c.sched != nil {
			due = c.gate
			c.sched.scheduled.Add(1)
			if c.e.sentIn(now) {
				c.sched.sent.Add(1)
			}
			if lag := now - due; lag > int64(lateThreshold) {
				c.e.noteLag(lag)
			}
		}
	}
	raw, _, ep, _ := c.w.req.Request()
	if !c.w.sending() {
		return h2pending{}, false, nil // the run ended while the request was made (a script's request())
	}
	if tr := c.w.x.tr; tr != nil {
		raw = tr.Unstamped() // HTTP/2 sends the traceparent in its own header field (start)
	}
	reqs, err := c.tr.translate(raw)
	if err != nil {
		return h2pending{}, false, fmt.Errorf("%w: %w", errTranslate, err)
	}
	if c.left > 0 {
		c.left = max(c.left-int64(len(reqs)), 0)
	}
	for i := 1; i < len(reqs); i++ {
		c.queue = append(c.queue, h2pending{req: &reqs[i], ep: uint8(ep), due: due, tp: c.traceOf(i)})
	}
	return h2pending{req: &reqs[0], ep: uint8(ep), due: due, tp: c.traceOf(0)}, true, nil
}

// open connects for request p; a failure is recorded as p's connect error.
func (c *h2conn) open(p h2pending) bool {
	if !c.w.connect(1, int(p.ep)) {
		if c.w.gaveUp {
			c.queue = nil // at a limit of the generator's machine: this connection ends
		}
		return false
	}
	if err := c.setup(); err != nil {
		c.drop()
		if !c.e.cancel.Load() {
			now := c.e.now()
			due := p.due
			if due < 0 {
				due = now
			}
			c.w.samples.add(measure.Sample{Done: now, Latency: now - due, Class: measure.ConnectError, Endpoint: p.ep})
		}
		return false
	}
	return true
}

// start opens a stream for p: HEADERS (and CONTINUATION), then as much of the body as the
// flow-control windows allow.
func (c *h2conn) start(p h2pending) error {
	var s *h2stream
	if n := len(c.spare); n > 0 {
		s = c.spare[n-1]
		c.spare = c.spare[:n-1]
	} else {
		s = &h2stream{}
	}
	*s = h2stream{capHeader: s.capHeader[:0], capBody: s.capBody[:0]}
	s.id = c.nextID
	c.nextID += 2
	s.ep, s.req, s.head, s.body = p.ep, *p.req, p.req.head, p.req.body
	s.start = c.e.now()
	s.due = p.due
	if s.due < 0 {
		s.due = s.start
	}
	s.sendWin = c.initWin
	s.tp = p.tp
	s.msgs.timed = c.e.grpcStream
	c.active = append(c.active, s)
	block := c.traced(s.req.block, &s.tp)
	first := block[:min(len(block), c.maxOut)]
	err := c.fw.WriteHeaders(http2.HeadersFrameParam{StreamID: s.id, BlockFragment: first,
		EndStream: len(s.body) == 0, EndHeaders: len(first) == len(block)})
	for block = block[len(first):]; err == nil && len(block) > 0; {
		part := block[:min(len(block), c.maxOut)]
		block = block[len(part):]
		err = c.fw.WriteContinuation(s.id, len(block) == 0, part)
	}
	if err != nil {
		return err
	}
	return c.sendBody(s)
}
