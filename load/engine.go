package load

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
)

// Progress is a live view of a running step.
type Progress struct {
	Elapsed  time.Duration
	Requests int64
	Errors   int64
}

// Option tunes a run in-process (what is saved goes in Config).
type Option func(*options)

type options struct {
	progress  func(Progress)
	intervals func(*measure.Interval)
	every     time.Duration
	expected  measure.StatusSet
	io        ioMode
}

// ioMode chooses how a run does its I/O; tests set it to cover every way.
type ioMode uint8

const (
	ioAuto          ioMode = iota // event loops where they fit, on io_uring where the kernel allows it, else goroutines
	ioGoroutines                  // a goroutine per connection
	ioEvloop                      // event loops where they fit, on epoll
	ioEvloopNetpoll               // ioEvloop, the open loop waiting as where epoll_pwait2 is missing
	ioUring                       // event loops that do their I/O on io_uring (else epoll, with a warning)
)

// IOEnv names the environment variable that chooses how HTTP/1.1 (over TCP or TLS) does its
// I/O: "goroutines" forces a goroutine per connection (the path --no-keepalive and scripts
// that watch responses or delay requests take) instead of the event loops, HTTP/2's too; "evloop" keeps the event
// loops on epoll (the fallback where io_uring is refused; the open loop waits in
// epoll_pwait2); "uring" runs them on io_uring and warns when the kernel refuses it; "netpoll"
// keeps closed loops on epoll and makes the open loop's event loops wait through Go's netpoller
// and a timerfd (the fallback where epoll_pwait2 is missing or refused); "" or "auto" is the
// default (event loops on io_uring where allowed, else epoll). It is for comparing the paths
// and testing the fallbacks.
const IOEnv = "APIPERF_IO"

// ioFromEnv reads IOEnv.
func ioFromEnv() (ioMode, error) {
	switch v := os.Getenv(IOEnv); v {
	case "", "auto":
		return ioAuto, nil
	case "goroutines":
		return ioGoroutines, nil
	case "evloop":
		return ioEvloop, nil
	case "uring":
		return ioUring, nil
	case "netpoll":
		return ioEvloopNetpoll, nil
	default:
		return ioAuto, fmt.Errorf("%s=%q: want auto, evloop, uring, netpoll or goroutines", IOEnv, v)
	}
}

// WithProgress calls f about once a second while the load runs.
func WithProgress(f func(Progress)) Option { return func(o *options) { o.progress = f } }

// withIO forces how a run does its I/O (tests cover every way).
func withIO(m ioMode) Option { return func(o *options) { o.io = m } }

// WithExpected sets the statuses that count as success (default 2xx and 3xx).
func WithExpected(s measure.StatusSet) Option { return func(o *options) { o.expected = s } }

// engine is a run's core, shared by the workers of one run: what it loads, its window, its
// recorders, and the driver (one per I/O strategy) that runs its connections. Workers read
// it; only atomics change.
type engine struct {
	cfg       Config
	target    scenario.Target
	src       scenario.Source
	dial      *dialer
	ctx       context.Context
	base      time.Time // the step's start; sample times are offsets from it
	timeout   time.Duration
	slack     time.Duration // how late a timeout may be noticed (deadlines are refreshed lazily)
	window                  // the measured window and what ends sending
	recs      []*measure.Recorder
	intervals             // the live stream of intervals
	tally                 // counts the recorders do not keep
	usage0    usage       // the generator's resource use when the run began
	reach     *reachWatch // stops the run when the target cannot be reached
	scriptStops
	genLimits             // where connections come from, and the generator's limit they met
	starved   atomic.Bool // open loop: the generator is short of CPU now (the clock does not spin)
	drv       driver      // the I/O strategy running the connections
	// grpcStream: the source calls a server-streaming gRPC method; its responses are timed as
	// streams (stream.go).
	grpcStream bool
}

// window is the measured window and what ends sending (honest windows, Ctrl-C).
type window struct {
	from, to time.Duration // the measured window (offsets from base); to 0: until the last request
	stop     atomic.Bool   // no new requests
	cancel   atomic.Bool   // abandon what is in flight (Ctrl-C)
	stopDial func()        // cancel dials still pending when sending stops
	cut      atomic.Int64  // when sending stopped (the window's end or an interruption); 0: not yet
}

// tally is what the run counts besides its recorders: connections and late sends.
type tally struct {
	conns    atomic.Int64 // connections opened
	connTime atomic.Int64 // their total dial time, ns
	lateSend atomic.Int64
	maxLag   atomic.Int64
	lateBusy atomic.Int64 // open loop: late sends that waited for a free connection
	longLine atomic.Int64 // protocol errors that were a header line over maxHeaderLine
}

// sentIn reports whether an attempt started at t (an offset from base) started inside the
// measured window: it counts in an open loop's achieved rate.
func (w *window) sentIn(t int64) bool {
	return t >= int64(w.from) && (w.to == 0 || t < int64(w.to))
}

// scriptStops are the engine threads a script stopped (wrk.thread:stop()).
type scriptStops struct {
	threadStop []atomic.Bool // threadStop[t]: a script stopped engine thread t; its connections end
	stopped    atomic.Int32  // threads stopped by a script
	srcErr     error         // the source's failure that stopped the run (scenario.Failer); set by supervise
	busy0      time.Duration // the source's time in its scripts when the run began (scenario.Busy)
}

// driver is one I/O strategy's runtime (goroutine workers closed or open, event loops closed
// or open, HTTP/2): it owns its connections and their state, and tells the core what only it
// knows. A new I/O path is one more driver, in its own file, chosen in Run.
type driver interface {
	interrupt()                  // make every blocked read or write return now (Ctrl-C)
	lastDone() int64             // when the latest attempt ended
	gauges(iv *measure.Interval) // the connections now, and in an open loop the requests in flight
	warning() string             // a caveat of the I/O path itself ("" none)
}

// Run loads the target with requests from src as cfg says and returns what it measured. It
// returns an error only when the load could not be set up; failed requests are data. When ctx
// is cancelled, sending stops at once and what was measured so far is returned.
func Run(ctx context.Context, cfg Config, src scenario.Source, target scenario.Target, opts ...Option) (*measure.Step, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if target.GRPC && !cfg.HTTP2 {
		return nil, errors.New("a gRPC target needs HTTP/2 (Config.HTTP2)")
	}
	o := options{expected: measure.DefaultExpected()}
	for _, opt := range opts {
		opt(&o)
	}
	if o.io == ioAuto {
		m, err := ioFromEnv()
		if err != nil {
			return nil, err
		}
		o.io = m
	}
	runCtx, cancelRun := context.WithCancel(ctx)
	defer cancelRun()
	defer bound(runCtx, cfg, src)()
	st, streaming := src.(scenario.Streamer)
	if cfg.Traceparent {
		src = scenario.Traced(src)
	}
	e := newEngine(runCtx, cfg, src, target, o)
	e.grpcStream = streaming && st.ServerStreaming()
	if err := e.planLocalAddrs(runCtx); err != nil {
		return nil, err
	}
	dialCtx, stopDial := context.WithCancel(runCtx)
	defer stopDial()
	e.stopDial = stopDial
	e.reach = e.watchReach(DefaultConnectGrace)
	defer e.reach.stop()
	names := src.Endpoints()
	if cfg.HTTP2 {
		e.dial.start(dialCtx, cfg.Connections)
		defer e.dial.stop()
		return e.runH2(o, names)
	}
	reqs := make([]scenario.Requester, cfg.Connections)
	for i := range reqs {
		req, err := src.Requester(i%cfg.Threads, i)
		if err != nil {
			return nil, fmt.Errorf("connection %d: %w", i, err)
		}
		reqs[i] = req
	}
	switch fits := e.evloopFits(o, reqs); {
	case cfg.OpenLoop() && fits:
		return e.runOpenEvloop(o, names, reqs)
	case fits:
		return e.runEvloop(o, names, reqs)
	}
	e.dial.start(dialCtx, cfg.Connections)
	defer e.dial.stop()
	if cfg.OpenLoop() {
		return e.runOpen(o, names, reqs)
	}
	return e.runClosed(o, names, reqs)
}

// newEngine sets up a run's core: its window and one recorder per engine thread.
func newEngine(ctx context.Context, cfg Config, src scenario.Source, target scenario.Target, o options) *engine {
	e := &engine{
		cfg: cfg, target: target, src: src, dial: newDialer(target, cfg), ctx: ctx,
		timeout: cfg.Timeout.Duration(),
	}
	e.slack = min(e.timeout/8, 100*time.Millisecond)
	e.usage0 = readUsage()
	if b, ok := src.(scenario.Busy); ok {
		e.busy0 = b.Busy()
	}
	e.from = cfg.Warmup.Duration()
	if d := cfg.Duration.Duration(); d > 0 {
		e.to = e.from + d
	}
	e.threadStop = make([]atomic.Bool, cfg.Threads)
	names := src.Endpoints()
	for i := 0; i < cfg.Threads; i++ {
		r := measure.NewRecorder(o.expected, cfg.OpenLoop(), len(names))
		r.Window(e.from, e.to)
		r.KeepSlowest(cfg.Slowest)
		e.recs = append(e.recs, r)
	}
	e.stream, e.onInterval = measure.NewIntervalStream(e.recs, o.every), o.intervals
	if o.intervals == nil {
		e.stream.ReuseIntervals() // emit only fills in gauges: nothing keeps an interval
	}
	return e
}

// budgets shares -n exactly over n connections: N/C each and the remainder to the first N%C
// (-1 each: until stopped).
func (e *engine) budgets(n int) []int64 {
	budgets := make([]int64, n)
	for i := range budgets {
		budgets[i] = -1
		if e.cfg.Requests > 0 {
			budgets[i] = e.cfg.Requests / int64(n)
			if int64(i) < e.cfg.Requests%int64(n) {
				budgets[i]++
			}
		}
	}
	return budgets
}

// evloopFits says whether the run can go on event loops: HTTP/1.1 over TCP or TLS on Linux,
// and no requester that watches responses or delays requests (those run on goroutine workers).
func (e *engine) evloopFits(o options, reqs []scenario.Requester) bool {
	if !evloopSupported || o.io == ioGoroutines || e.cfg.NoKeepAlive || e.target.Scheme != "http" && e.target.Scheme != "https" {
		return false
	}
	for _, r := range reqs {
		if _, ok := r.(scenario.ResponseWatcher); ok {
			return false
		}
		if _, ok := r.(scenario.Delayer); ok {
			return false
		}
	}
	return true
}

// now is the time since the step started (monotonic).
func (e *engine) now() int64 { return int64(time.Since(e.base)) }
