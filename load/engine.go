package load

import (
	"context"
	"fmt"
	"os"
	"sync"
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

// IOEnv names the environment variable that chooses how HTTP/1.1 over plain TCP does its
// I/O: "goroutines" forces a goroutine per connection (the path TLS, HTTP/2 and scripts that
// watch responses or delay requests take) instead of the event loops; "evloop" keeps the event
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

// engine is the state shared by the workers of one run. Workers read it; only atomics change.
type engine struct {
	cfg      Config
	target   scenario.Target
	src      scenario.Source
	dial     *dialer
	base     time.Time // the step's start; sample times are offsets from it
	timeout  time.Duration
	slack    time.Duration // how late a timeout may be noticed (deadlines are refreshed lazily)
	from, to time.Duration // the measured window (offsets from base); to 0: until the last request
	stop     atomic.Bool   // no new requests
	cancel   atomic.Bool   // abandon what is in flight (Ctrl-C)
	stopDial func()        // cancel dials still pending when sending stops
	ctx      context.Context
	mu       sync.Mutex // guards workers' connections for interruption
	workers  []*worker
	loops    []*evloop // closed loop on event loops (instead of workers)
	recs     []*measure.Recorder
	lateSend atomic.Int64
	maxLag   atomic.Int64
	conns    atomic.Int64 // connections opened
	connTime atomic.Int64 // their total dial time, ns
	usage0   usage        // the generator's resource use when the run began
	reach    *reachWatch  // stops the run when the target cannot be reached

	// The measured window and what ends sending (honest windows, per-thread script stops).
	cut atomic.Int64 // when sending stopped (the window's end or an interruption); 0: not yet
	// threadStop[t]: a script stopped engine thread t (wrk.thread:stop()); its connections end.
	threadStop []atomic.Bool
	stopped    atomic.Int32 // threads stopped by a script
	clock      *clock       // open loop: wakes workers when their requests are due
	lateBusy   atomic.Int64 // open loop: late sends that waited for a free connection
	starved    atomic.Bool  // open loop: the generator is short of CPU now (the clock does not spin)

	stream     *measure.IntervalStream
	onInterval func(*measure.Interval)
	sealed     int64                 // intervals emitted so far
	ivLag      atomic.Int64          // the largest send lag in the current interval
	sched      *openSchedule         // open loop
	pool       atomic.Int64          // open loop on event loops: connections in the pool
	connIDs    atomic.Int64          // open loop on event loops: ids given to connections
	reqMu      sync.Mutex            // serializes src.Requester for connections added while running
	ringErr    atomic.Pointer[error] // why an event loop could not use io_uring (it ran on epoll)
	ringForced bool                  // APIPERF_IO=uring: say so when it was refused
}

// ringRefused notes why an event loop could not use io_uring.
func (e *engine) ringRefused(err error) { e.ringErr.CompareAndSwap(nil, &err) }

// chooseRing sets the event loops to do their I/O on io_uring, by default and with
// APIPERF_IO=uring, unless tooBig says this run does not fit a ring (the loops then run on
// epoll, and APIPERF_IO=uring says why). A loop whose kernel refuses the ring stays on epoll
// too (startRing).
func (e *engine) chooseRing(o options, loops []*evloop, tooBig error) {
	e.ringForced = o.io == ioUring
	on := o.io == ioUring || o.io == ioAuto
	if on && tooBig != nil {
		e.ringRefused(tooBig)
		on = false
	}
	for _, l := range loops {
		l.useRing = on
	}
}

// Run loads the target with requests from src as cfg says and returns what it measured. It
// returns an error only when the load could not be set up; failed requests are data. When ctx
// is cancelled, sending stops at once and what was measured so far is returned.
func Run(ctx context.Context, cfg Config, src scenario.Source, target scenario.Target, opts ...Option) (*measure.Step, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
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
	if cfg.Traceparent {
		src = scenario.Traced(src)
	}
	e := &engine{
		cfg: cfg, target: target, src: src, dial: newDialer(target, cfg), ctx: runCtx,
		timeout: cfg.Timeout.Duration(),
	}
	e.slack = min(e.timeout/8, 100*time.Millisecond)
	e.usage0 = readUsage()
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
	dialCtx, stopDial := context.WithCancel(runCtx)
	defer stopDial()
	e.stopDial = stopDial
	e.reach = e.watchReach(DefaultConnectGrace)
	defer e.reach.stop()
	if cfg.HTTP2 {
		e.dial.start(dialCtx, cfg.Connections)
		defer e.dial.stop()
		return e.runH2(o, names)
	}
	n := cfg.Connections
	reqs := make([]scenario.Requester, n)
	for i := range reqs {
		req, err := src.Requester(i%cfg.Threads, i)
		if err != nil {
			return nil, fmt.Errorf("connection %d: %w", i, err)
		}
		reqs[i] = req
	}
	if cfg.OpenLoop() {
		if e.evloopFits(o, reqs) {
			return e.runOpenEvloop(o, names, reqs)
		}
		e.dial.start(dialCtx, cfg.Connections)
		defer e.dial.stop()
		return e.runOpen(o, names, reqs)
	}
	budgets := make([]int64, n)
	for i := range reqs {
		budgets[i] = -1
		if cfg.Requests > 0 {
			// An exact share: N/C each and the remainder to the first N%C connections.
			budgets[i] = cfg.Requests / int64(n)
			if int64(i) < cfg.Requests%int64(n) {
				budgets[i]++
			}
		}
	}
	var wg sync.WaitGroup
	if e.evloopFits(o, reqs) {
		loops, err := e.newEvloops(reqs, budgets)
		if err != nil {
			return nil, err
		}
		e.loops = loops
		e.chooseRing(o, loops, nil)
		e.base = time.Now()
		for _, l := range loops {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l.run()
			}()
		}
		e.supervise(&wg, o)
		return e.finish(names), nil
	}
	e.dial.start(dialCtx, cfg.Connections)
	defer e.dial.stop()
	for i, req := range reqs {
		w := newWorker(e, i, req)
		w.budget = budgets[i]
		e.workers = append(e.workers, w)
	}
	e.base = time.Now()
	for _, w := range e.workers {
		if w.budget == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.closedLoop()
		}()
	}
	e.supervise(&wg, o)
	return e.finish(names), nil
}

// evloopFits says whether the closed loop can run on event loops: plain TCP on Linux, and
// no requester that watches responses or delays requests (those run on goroutine workers).
func (e *engine) evloopFits(o options, reqs []scenario.Requester) bool {
	if !evloopSupported || o.io == ioGoroutines || e.target.Scheme != "http" || e.cfg.NoKeepAlive {
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

// supervise stops the run at its deadline or on cancellation, reports progress, and waits
// for the workers; it returns when the last worker ended. Workers that all ended because a
// script stopped their threads leave the run going until its duration is over, as in wrk.
func (e *engine) supervise(wg *sync.WaitGroup, o options) {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	var deadline <-chan time.Time
	if e.to > 0 {
		t := time.NewTimer(time.Until(e.base.Add(e.to)))
		defer t.Stop()
		deadline = t.C
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	sealer := time.NewTimer(e.nextSeal())
	defer sealer.Stop()
	ctxDone := e.ctx.Done()
	idle := false // every worker ended, waiting out the duration
	for {
		select {
		case <-sealer.C:
			now := time.Since(e.base)
			e.seal(now)
			sealer.Reset(e.nextSeal() - now)
		case <-done:
			if deadline == nil || e.stopped.Load() == 0 || e.stop.Load() {
				return
			}
			idle, done = true, nil
		case <-deadline:
			e.cut.CompareAndSwap(0, int64(e.to))
			e.stop.Store(true)
			e.stopDial() // a connection not open by now would only send after the window
			deadline = nil
			if idle {
				return
			}
		case <-ctxDone:
			now := time.Since(e.base)
			if e.cut.CompareAndSwap(0, int64(max(now, e.from))) {
				for _, r := range e.recs {
					r.Window(e.from, max(now, e.from))
				}
			}
			e.stop.Store(true)
			e.cancel.Store(true)
			e.interruptAll()
			ctxDone = nil
			if idle {
				return
			}
		case <-tick.C:
			if o.progress != nil {
				p := Progress{Elapsed: time.Since(e.base)}
				for _, r := range e.recs {
					req, errs := r.Progress()
					p.Requests += req
					p.Errors += errs
				}
				o.progress(p)
			}
		}
	}
}

// interruptAll makes every blocked read or write return now.
func (e *engine) interruptAll() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, w := range e.workers {
		w.interrupt()
	}
	for _, l := range e.loops {
		l.interrupt()
	}
}

func (e *engine) addWorker(w *worker) {
	e.mu.Lock()
	e.workers = append(e.workers, w)
	e.mu.Unlock()
	if e.cancel.Load() {
		w.interrupt()
	}
}

// closed reports whether the measured window is over at now: a closed loop sends nothing
// after it, even before the supervisor has noticed the deadline.
func (e *engine) closed(now int64) bool { return e.to > 0 && now >= int64(e.to) }

// halted reports whether the run stopped for another reason than the end of its window
// (an interruption, or a script's error).
func (e *engine) halted() bool {
	return e.cancel.Load() || (e.stop.Load() && (e.to == 0 || e.cut.Load() != int64(e.to)))
}

// stopThread ends engine thread t's connections (a script's wrk.thread:stop()).
func (e *engine) stopThread(t int) {
	if !e.threadStop[t].Swap(true) {
		e.stopped.Add(1)
	}
}

// finish combines what was recorded. The window ends when sending stopped (the duration, or
// an interruption); when every request was done before that, with the last attempt.
func (e *engine) finish(names []string) *measure.Step {
	var last int64
	e.mu.Lock()
	for _, w := range e.workers {
		last = max(last, w.samples.lastDone)
	}
	for _, l := range e.loops {
		last = max(last, l.samples.lastDone)
	}
	e.mu.Unlock()
	end := time.Duration(e.cut.Load())
	if end == 0 {
		end = time.Duration(last)
	}
	e.stream.Close(e.emit)
	s := e.stream.Step(e.base.Add(e.from), max(end-e.from, 0), names)
	s.Concurrency = e.cfg.Connections
	s.Connects, s.ConnectTime = e.conns.Load(), measure.Duration(e.connTime.Load())
	s.Generator = generator(e.usage0, readUsage())
	if e.cfg.OpenLoop() {
		s.Open = &measure.OpenLoop{
			TargetRate:  e.cfg.Rate,
			LateSends:   e.lateSend.Load(),
			MaxLag:      measure.Duration(e.maxLag.Load()),
			Connections: int(e.conns.Load()),
		}
	}
	if p := e.ringErr.Load(); p != nil && e.ringForced {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s=uring: %v; the event loops ran on epoll", IOEnv, *p))
	}
	if w := e.dial.tlsErr.warning(); w != "" {
		s.Warnings = append(s.Warnings, w)
	}
	if w := e.reach.warning(); w != "" {
		// "unable to connect to ADDR: connection refused" or "no TLS connection"
		s.Warnings = append(s.Warnings, w+" (no connection opened in "+DefaultConnectGrace.String()+"); stopped")
	}
	if e.cancel.Load() {
		s.Interrupted = true
		s.Warnings = append(s.Warnings, "interrupted: the run was stopped early; the numbers cover what was measured until then")
	}
	if n := e.stopped.Load(); n > 0 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("the script stopped %d of %d threads (wrk.thread:stop()); they sent nothing more", n, e.cfg.Threads))
	}
	return s
}

// now is the time since the step started (monotonic).
func (e *engine) now() int64 { return int64(time.Since(e.base)) }
