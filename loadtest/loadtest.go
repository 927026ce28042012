package loadtest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"time"

	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/scenario"
	"github.com/apiperf/apiperf/scenario/lua"
	"github.com/apiperf/apiperf/sweep"
)

// Defaults of a load, chosen for go test: short, and light enough to share a laptop.
const (
	DefaultConnections = 4
	DefaultDuration    = time.Second
	DefaultTimeout     = load.DefaultTimeout
)

// Target is what a load is sent to: a URL, or a handler served in-process.
type Target struct {
	url     string
	handler http.Handler
}

// URL is a target reached over the network at rawURL (http:// or https://).
func URL(rawURL string) Target { return Target{url: rawURL} }

// Handler is a target served in-process: each load starts its own http.Server for h on a
// fresh 127.0.0.1 port and shuts it down when the load ends.
func Handler(h http.Handler) Target { return Target{handler: h} }

// String names the target: its URL, or "in-process handler".
func (t Target) String() string {
	if t.handler != nil {
		return "in-process handler"
	}
	return scenario.RedactURL(t.url)
}

// Option sets one knob of a load.
type Option func(*settings)

// settings is a load as the options describe it.
type settings struct {
	connections int
	threads     int
	duration    time.Duration
	durationSet bool
	requests    int64
	timeout     time.Duration
	rate        float64
	maxConns    int
	warmup      time.Duration
	warmupSet   bool
	http2       bool
	method      string
	path        string
	headers     []scenario.Header
	body        string
	expected    *measure.StatusSet
	script      string   // a wrk Lua script
	scriptArgs  []string // the words its init sees after the URL
	mixFile     string
	mix         *scenario.Mix // the mix loaded from mixFile
	cost        bool
	timed       *timedHandler // the served handler under MeasureCost
	// targetProcess: TargetProcess was given; targetPID is the process (found before any
	// request when given as 0).
	targetProcess bool
	targetPID     int
	// measuring is called just before the measured step and measured just after it
	// (Benchmark starts and stops its timer there); either may be nil.
	measuring, measured func()
	errs                []error
}

// Connections sets the closed loop's connections, each with one request in flight (in an
// open loop: the pool it starts with). Default DefaultConnections.
func Connections(n int) Option { return func(s *settings) { s.connections = n } }

// Rate makes the load an open loop: perSecond requests started on a fixed schedule, latency
// measured from when each was due (corrected for coordinated omission).
func Rate(perSecond float64) Option { return func(s *settings) { s.rate = perSecond } }

// MaxConnections caps how many connections an open loop may open (default 10000).
func MaxConnections(n int) Option { return func(s *settings) { s.maxConns = n } }

// Duration sets the measured window's length (default DefaultDuration; 0 with Requests:
// until the requests are done).
func Duration(d time.Duration) Option {
	return func(s *settings) { s.duration, s.durationSet = d, true }
}

// Requests sends exactly n requests; without Duration the load lasts as long as they take.
func Requests(n int64) Option { return func(s *settings) { s.requests = n } }

// Warmup loads for d before the measured window (same connections), so the window starts
// in steady state.
func Warmup(d time.Duration) Option { return func(s *settings) { s.warmup, s.warmupSet = d, true } }

// Timeout abandons a request after d and counts a timeout (default DefaultTimeout).
func Timeout(d time.Duration) Option { return func(s *settings) { s.timeout = d } }

// Threads sets the engine's threads (default: half the GOMAXPROCS for a Handler, leaving
// the rest to it; all of them for a URL; never more than the connections).
func Threads(n int) Option { return func(s *settings) { s.threads = n } }

// HTTP2 speaks HTTP/2: h2c with prior knowledge for http:// and handlers, h2 by ALPN for
// https://.
func HTTP2() Option { return func(s *settings) { s.http2 = true } }

// Method sets the request method (default GET).
func Method(m string) Option { return func(s *settings) { s.method = m } }

// Path sets the request's path and query, e.g. "/users/42?full=1" (for a URL target, in
// place of the URL's own).
func Path(p string) Option { return func(s *settings) { s.path = p } }

// Header adds a request header.
func Header(name, value string) Option {
	return func(s *settings) {
		h, err := scenario.ParseHeader(name + ": " + value)
		if err != nil {
			s.errs = append(s.errs, err)
			return
		}
		s.headers = append(s.headers, h)
	}
}

// Body sets the request body.
func Body(b string) Option { return func(s *settings) { s.body = b } }

// Script sends the requests a wrk Lua script makes (wrk.method, request(), response(),
// delay()...); args are what its init sees after the URL. What it prints is discarded.
func Script(path string, args ...string) Option {
	return func(s *settings) { s.script, s.scriptArgs = path, args }
}

// Mix sends a weighted mix of endpoints described in a YAML or JSON scenario file (see
// docs/SCENARIOS.md); the result then has a record per endpoint (Step().Endpoints). The
// target's URL gives the scheme, host and port; each endpoint its path.
func Mix(path string) Option { return func(s *settings) { s.mixFile = path } }

// Expect counts statuses lo..hi as success (repeatable; default 200-399).
func Expect(lo, hi int) Option {
	return func(s *settings) {
		if lo < 100 || hi > 999 || hi < lo {
			s.errs = append(s.errs, fmt.Errorf("expect %d-%d: want status codes from 100 to 999, low to high", lo, hi))
			return
		}
		if s.expected == nil {
			s.expected = new(measure.StatusSet)
		}
		s.expected.AddRange(lo, hi)
	}
}

// MeasureCost measures the handler's own CPU time, allocations and bytes per request (see
// the package doc for how): a Handler target only. It runs a baseline load first, so the
// load takes about twice as long.
func MeasureCost() Option { return func(s *settings) { s.cost = true } }

// TargetProcess measures the CPU time a URL target's process spends per request, as `apiperf
// ab --pid-a` and the CLI's target capture read it (the scheduler's run time of its threads
// in /proc, around the measured step; Linux): pid, or with pid 0 the process listening on the
// URL's loopback address. Result.TargetCPU has it. For a Handler target, use MeasureCost.
func TargetProcess(pid int) Option {
	return func(s *settings) {
		if pid < 0 {
			s.errs = append(s.errs, fmt.Errorf("TargetProcess(%d): want a process id, or 0 for the process listening on the URL", pid))
			return
		}
		s.targetPID, s.targetProcess = pid, true
	}
}

// settingsFor applies opts over the defaults for t and reports every problem at once.
func settingsFor(t Target, opts []Option) (*settings, error) {
	s := &settings{connections: DefaultConnections, timeout: DefaultTimeout}
	for _, o := range opts {
		o(s)
	}
	if !s.durationSet && s.requests == 0 {
		s.duration = DefaultDuration
	}
	errs := s.errs
	switch {
	case t.handler == nil && t.url == "":
		errs = append(errs, errors.New("no target: give loadtest.URL or loadtest.Handler"))
	case t.handler == nil && s.cost:
		errs = append(errs, errors.New("MeasureCost needs a Handler target: a URL's process is not this one"))
	case s.cost && s.warmup > 0:
		errs = append(errs, errors.New("MeasureCost divides the whole load's cost by its requests: give no Warmup"))
	case t.handler != nil && s.targetProcess:
		errs = append(errs, errors.New("TargetProcess is for a URL target: a Handler's cost is MeasureCost's"))
	case s.targetProcess && s.warmup > 0:
		errs = append(errs, errors.New("TargetProcess divides the target's CPU over the load by its requests: give no Warmup"))
	}
	if s.targetProcess && len(errs) == 0 {
		errs = append(errs, s.findTarget(t.url))
	}
	if s.script != "" && s.mixFile != "" {
		errs = append(errs, errors.New("give Script or Mix, not both"))
	}
	if s.mixFile != "" {
		mix, err := scenario.LoadMix(s.mixFile)
		if err != nil {
			errs = append(errs, err)
		}
		s.mix = mix
	}
	if s.path != "" && !strings.HasPrefix(s.path, "/") {
		errs = append(errs, fmt.Errorf("path %q must start with /", s.path))
	}
	if s.threads == 0 {
		s.threads = runtime.GOMAXPROCS(0)
		if t.handler != nil {
			s.threads = max(s.threads/2, 1)
		}
	}
	return s, errors.Join(errs...)
}

// config is the engine's configuration for s.
func (s *settings) config() load.Config {
	cfg := load.Config{
		Connections: s.connections, Threads: s.threads, Duration: measure.Duration(s.duration),
		Warmup: measure.Duration(s.warmup), Requests: s.requests, Timeout: measure.Duration(s.timeout),
		Rate: s.rate, MaxConnections: s.maxConns, HTTP2: s.http2,
	}
	if s.http2 {
		cfg.Streams = load.DefaultStreams
	}
	if s.requests > 0 && int64(cfg.Connections) > s.requests && !cfg.OpenLoop() {
		cfg.Connections = int(s.requests) // no connection without a request to send
	}
	return cfg.WithConnections(cfg.Connections)
}

// scenario is the request s sends to base (the target's URL or the in-process server's).
func (s *settings) scenario(base string) (scenario.Scenario, error) {
	if s.path != "" {
		u, err := url.Parse(base)
		if err != nil {
			return scenario.Scenario{}, fmt.Errorf("URL %q does not parse", scenario.RedactURL(base))
		}
		base = u.Scheme + "://" + u.Host + s.path
	}
	sc := scenario.Scenario{URL: base, Method: s.method, Headers: s.headers, Body: s.body, Script: s.script, Mix: s.mix}
	if _, err := scenario.ParseTarget(base); err != nil {
		return sc, err
	}
	return sc, sc.Validate()
}

// Result is what one load measured.
type Result struct {
	// Run is the run document, as `apiperf run -o run.json` saves it (secrets redacted): its
	// one step holds the histograms, counts, statuses, slowest requests and Server-Timing.
	Run *result.Run
	// Handler is the handler's cost per request; nil unless MeasureCost was asked for a
	// Handler target.
	Handler *HandlerCost
	// inProcess: the target was served in this process.
	inProcess bool
}

// Step is the load's measured step.
func (r *Result) Step() *measure.Step { return r.Run.Steps[0] }

// Level is the step reduced as every apiperf output reduces it (rates, pooled percentiles,
// success and error rates): what objectives judge. For a Handler target it is never marked
// generator-bound: the process's CPU is the handler's as much as the generator's, so a busy
// process says nothing about the generator alone.
func (r *Result) Level() sweep.Level {
	s := r.Step()
	v, open := sweep.ValueOf(s)
	l := sweep.Reduce(sweep.Label(open, v), v, open, r.Run.Steps, []int{0})
	if r.inProcess {
		l.GeneratorBound = false
	}
	return l
}

// Percentile is the latency at percentile p (0 to 100) of every complete response; 0 when
// there was none.
func (r *Result) Percentile(p float64) time.Duration {
	if h := r.Step().Latency; h != nil && h.Count() > 0 {
		return h.Percentile(p)
	}
	return 0
}

// TargetCPU is the CPU time the target's process spent per request over the measured step
// (TargetProcess); 0 when it was not asked for or no request completed.
func (r *Result) TargetCPU() time.Duration {
	s := r.Step()
	if s.TargetCPU <= 0 || s.Requests <= 0 {
		return 0
	}
	return s.TargetCPU.Duration() / time.Duration(s.Requests)
}

// QPS is responses completed in the measured window per second of it.
func (r *Result) QPS() float64 { return r.Step().QPS() }

// String is the result's summary line, e.g. "5000 requests in 1.02s, 4902 req/s, p50 0.18ms,
// p99 0.61ms, p99.9 1.2ms, success 100%, errors none".
func (r *Result) String() string {
	s := r.Step()
	ms := func(d time.Duration) string { return fmt.Sprintf("%.3gms", float64(d)/float64(time.Millisecond)) }
	errs := s.Errors.String()
	if errs == "" {
		errs = "none"
	}
	line := fmt.Sprintf("%d requests in %s, %.0f req/s, p50 %s, p99 %s, p99.9 %s, success %.4g%%, errors %s",
		s.Requests, s.Elapsed.Duration().Round(time.Millisecond), s.QPS(), ms(r.Percentile(50)), ms(r.Percentile(99)),
		ms(r.Percentile(99.9)), s.SuccessRate(), errs)
	if r.Handler != nil {
		line += "; handler " + r.Handler.Handler.String()
	}
	if cpu := r.TargetCPU(); cpu > 0 {
		line += fmt.Sprintf("; target process %v CPU per request", cpu.Round(10*time.Nanosecond))
	}
	if s.Interrupted {
		line += " (interrupted)"
	}
	return line
}

// Run loads t as opts say and returns what was measured. Bad options are an error before
// any request is sent; failed requests are data in the result, not errors. When ctx is
// cancelled, sending stops at once and Run returns what was measured so far.
func Run(ctx context.Context, t Target, opts ...Option) (*Result, error) {
	s, err := settingsFor(t, opts)
	cfg := s.config()
	if err := errors.Join(err, cfg.Validate()); err != nil {
		return nil, err
	}
	var baseline *Cost
	if s.cost {
		b, err := s.baseline(ctx, cfg)
		if err != nil {
			return nil, err
		}
		baseline = &b
	}
	sc, done, err := s.served(t) // ab.go
	if err != nil {
		return nil, err
	}
	defer done()
	return s.run(ctx, cfg, sc, baseline, t.handler != nil)
}

// run runs the measured step of sc and makes its result; baseline, when not nil, is the
// empty handler's usage per request, and the handler's cost is measured against it.
func (s *settings) run(ctx context.Context, cfg load.Config, sc scenario.Scenario, baseline *Cost, inProcess bool) (*Result, error) {
	step, use, err := s.step(ctx, cfg, sc, true)
	if err != nil {
		return nil, err
	}
	doc := &result.Run{
		Version: result.Version, Tool: "apiperf loadtest", Kind: result.KindRun,
		Command: []string{"loadtest.Run"}, Scenario: sc, Load: cfg, Start: step.Start,
		End: time.Now().UTC(), Steps: []*measure.Step{step},
	}
	doc.Redact()
	res := &Result{Run: doc, inProcess: inProcess}
	if baseline != nil {
		res.Handler = newCost(use, step, *baseline)
	}
	return res, nil
}

// step runs one load step of sc and reads the process's usage around it.
func (s *settings) step(ctx context.Context, cfg load.Config, sc scenario.Scenario, measured bool) (*measure.Step, usage, error) {
	target, err := scenario.ParseTarget(sc.URL)
	if err != nil {
		return nil, usage{}, err
	}
	src, closeSrc, err := s.source(ctx, sc, cfg.Threads)
	if err != nil {
		return nil, usage{}, err
	}
	defer closeSrc()
	opts := []load.Option{}
	if s.expected != nil {
		opts = append(opts, load.WithExpected(*s.expected))
	}
	if measured && s.measuring != nil {
		s.measuring()
	}
	t0, err := s.targetSched(measured)
	if err != nil {
		return nil, usage{}, err
	}
	u0 := readUsage()
	s.timed.read(&u0)
	step, err := load.Run(ctx, cfg, src, target, opts...)
	u1 := readUsage()
	s.timed.read(&u1)
	if t1, terr := s.targetSched(measured); err == nil && terr != nil {
		err = terr
	} else if err == nil && measured && s.targetProcess {
		step.TargetCPU = measure.Duration(t1.Run - t0.Run)
	}
	if measured && s.measured != nil {
		s.measured()
	}
	if err != nil {
		return nil, usage{}, err
	}
	if step.Label == "" {
		step.Label = sweep.ConfigLabel(cfg)
	}
	return step, u1.since(u0), nil
}

// source makes the request source of sc: a script's, a mix's or the one request; close
// releases it after the step.
func (s *settings) source(ctx context.Context, sc scenario.Scenario, threads int) (src scenario.Source, close func(), err error) {
	switch {
	case sc.Script != "":
		l, err := lua.New(sc.Script, sc, lua.Options{Args: s.scriptArgs, Context: ctx, Threads: threads})
		if err != nil {
			return nil, nil, err
		}
		return l, l.Close, nil
	case sc.Mix != nil:
		m, err := sc.Mix.Source(sc)
		return m, func() {}, err
	}
	st, err := scenario.NewStatic(sc)
	return st, func() {}, err
}
