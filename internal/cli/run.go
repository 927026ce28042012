package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/apiperf/apiperf/cluster"
	"github.com/apiperf/apiperf/live"
	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/outfile"
	"github.com/apiperf/apiperf/report"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/scenario"
	"github.com/apiperf/apiperf/sweep"
)

// loadFlags are the flags `run`, `sweep` and `capacity` share: what to send and how.
type loadFlags struct {
	connections int
	threads     int
	duration    time.Duration
	timeout     time.Duration
	requests    int64
	rate        float64
	maxConns    int
	headers     []string
	method      string
	body        string
	bodyFile    string
	insecure    bool
	expect      string
	redact      []string
	keepBody    bool
	// notices receives a line whenever build changes what the user asked for.
	notices    io.Writer
	http2      bool
	streams    int
	noKeep     bool
	localAddrs []string
	// traceparent and slowest: trace context on every request, slowest responses kept.
	traceparent bool
	slowest     int
	grpc        *grpcFlags // the source's --proto flags, to check them with the URL
}

func (f *loadFlags) register(fs *pflag.FlagSet) {
	f.connections = load.DefaultConnections
	f.duration = load.DefaultDuration
	f.timeout = load.DefaultTimeout
	f.threads = runtime.NumCPU()
	fs.VarP(intCount{&f.connections}, "connections", "c", "connections to keep open (closed loop: each with one request in flight)")
	fs.VarP(durationValue{&f.duration}, "duration", "d", "duration of the test, e.g. 30s, 2m (a bare number is seconds)")
	fs.VarP(intCount{&f.threads}, "threads", "t", "engine threads (OS threads running the load)")
	fs.VarP(durationValue{&f.timeout}, "timeout", "T", "abandon a request after this long and count a timeout")
	fs.VarP(countValue{&f.requests}, "requests", "n", "send exactly this many requests (then stop; with -d, whichever comes first)")
	fs.VarP(rateValue{&f.rate}, "rate", "R", "open loop: start this many requests per second in total (2.5k, 0.5)")
	fs.VarP(intCount{&f.maxConns}, "max-connections", "", fmt.Sprintf("open loop: open at most this many connections (default %d; equal to -c keeps a fixed pool)", load.DefaultMaxConnections))
	fs.StringArrayVarP(&f.headers, "header", "H", nil, "add a request header \"Name: value\" (repeatable)")
	fs.StringVarP(&f.method, "method", "m", "", "request method (default GET)")
	fs.StringVar(&f.body, "body", "", "request body")
	fs.StringVar(&f.bodyFile, "body-file", "", "read the request body from this file")
	fs.BoolVarP(&f.insecure, "insecure", "k", false, "do not verify the server's TLS certificate")
	fs.StringVar(&f.expect, "expect", "200-399", "status codes that count as success, e.g. 200,201 or 200-299")
	fs.StringArrayVar(&f.redact, "redact", nil, "also redact the value of this query parameter in every output (repeatable; token, api_key, password... always are)")
	fs.BoolVar(&f.keepBody, "keep-body", false, "save the request body in run.json and reports (default: only its length and SHA-256)")
	fs.BoolVar(&f.noKeep, "no-keepalive", false, "open a new connection for every request (its connect counts in the latency)")
	fs.BoolVar(&f.http2, "http2", false, "speak HTTP/2: h2 by TLS ALPN for https://, h2c with prior knowledge for http://")
	f.streams = load.DefaultStreams
	fs.VarP(intCount{&f.streams}, "streams", "", "HTTP/2: concurrent streams per connection (closed loop: -c x --streams in flight)")
	fs.StringArrayVar(&f.localAddrs, "source", nil, "open connections from these local addresses, in turn: ADDR[,ADDR...], ranges allowed (10.0.0.5-10.0.0.8); a 127.x target spreads over 127.0.0.0/8 by itself")
	fs.BoolVar(&f.traceparent, "traceparent", false, "send a W3C traceparent header with new random ids on every request (a script's own wins), so the slowest requests can be looked up in your traces")
	f.slowest = measure.DefaultSlowest
	fs.VarP(intCount{&f.slowest}, "slowest", "", "keep this many of each step's slowest requests (run.json, report.html, text with --latency)")
}

// loadCommandFlags registers the flags run, sweep and capacity share: what to send (load
// and source flags) and where the run is recorded (history flags).
func loadCommandFlags(fs *pflag.FlagSet, e *env) (*loadFlags, *sourceFlags, *historyFlags) {
	lf, hf := &loadFlags{notices: e.stderr}, &historyFlags{}
	sf := &sourceFlags{stdout: e.stdout, load: lf}
	lf.register(fs)
	e.redact = &lf.redact // what the command prints is redacted with the --redact names too
	sf.register(fs)
	hf.register(fs)
	return lf, sf, hf
}

// build checks the flags and returns the scenario, the load config and the expected statuses,
// reporting every problem at once.
func (f *loadFlags) build(fs *pflag.FlagSet, url string) (scenario.Scenario, load.Config, measure.StatusSet, error) {
	var errs []error
	sc := scenario.Scenario{URL: url, Method: f.method, Body: f.body, SecretParams: f.redact, KeepBody: f.keepBody}
	target, err := scenario.ParseTarget(url)
	if err != nil {
		errs = append(errs, err)
	}
	grpcExpected, grpcErrs := f.checkGRPC(fs, target)
	errs = append(errs, grpcErrs...)
	for _, h := range f.headers {
		hdr, err := scenario.ParseHeader(h)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		sc.Headers = append(sc.Headers, hdr)
	}
	if f.bodyFile != "" {
		if f.body != "" {
			errs = append(errs, errors.New("give --body or --body-file, not both"))
		}
		b, err := scenario.ReadFile(f.bodyFile)
		if err != nil {
			errs = append(errs, fmt.Errorf("--body-file: %w", err))
		}
		sc.Body, sc.BodyFile = string(b), f.bodyFile
	}
	cfg := load.Config{
		Connections: f.connections, Threads: f.threads, Duration: measure.Duration(f.duration),
		Requests: f.requests, Timeout: measure.Duration(f.timeout), Rate: f.rate,
		MaxConnections: f.maxConns, Insecure: f.insecure, HTTP2: f.http2 || target.GRPC, NoKeepAlive: f.noKeep,
		LocalAddrs: strings.Join(f.localAddrs, ","), Traceparent: f.traceparent,
	}
	if addrs, err := load.ParseLocalAddrs(cfg.LocalAddrs); err == nil {
		if err := load.CheckLocalAddrs(addrs); err != nil {
			errs = append(errs, err) // a typo'd address fails here; a malformed one in Validate
		}
	}
	if fs.Changed("slowest") {
		cfg.Slowest = f.slowest
		if f.slowest < 1 {
			errs = append(errs, fmt.Errorf("--slowest must be at least 1, got %d", f.slowest))
		}
	}
	if cfg.HTTP2 || fs.Changed("streams") {
		cfg.Streams = f.streams
	}
	if f.requests > 0 && !fs.Changed("duration") {
		cfg.Duration = 0 // -n alone: exactly N requests, however long they take
	}
	if clamped := cfg.WithConnections(cfg.Connections); clamped.Threads != cfg.Threads {
		if fs.Changed("threads") && f.notices != nil {
			fmt.Fprintf(f.notices, "apiperf: note: running %d threads, not %d: each thread needs at least one of the %d connections\n",
				clamped.Threads, cfg.Threads, cfg.Connections)
		}
		cfg = clamped
	}
	if err := sc.Validate(); err != nil && len(errs) == 0 {
		errs = append(errs, err)
	}
	if err := cfg.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := checkCounts(fs); err != nil {
		errs = append(errs, err)
	}
	expected := grpcExpected
	if !target.GRPC {
		if expected, err = parseExpect(f.expect); err != nil {
			errs = append(errs, err)
		}
	}
	return sc, cfg, expected, errors.Join(errs...)
}

// parseExpect reads "200-299,304" into a status set.
func parseExpect(s string) (measure.StatusSet, error) {
	var set measure.StatusSet
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err1 := parseStatus(lo)
		b, err2 := a, error(nil)
		if isRange {
			b, err2 = parseStatus(hi)
		}
		if err1 != nil || err2 != nil || b < a {
			return set, fmt.Errorf("--expect %q: want status codes like 200-299,304", s)
		}
		set.AddRange(a, b)
	}
	return set, nil
}

func parseStatus(s string) (int, error) {
	var n int
	if _, err := fmt.Sscanf(strings.TrimSpace(s), "%d", &n); err != nil || n < 100 || n > 999 {
		return 0, fmt.Errorf("bad status %q", s)
	}
	return n, nil
}

// checkFileLimit raises the open-file limit and fails when conns cannot be opened.
func checkFileLimit(conns int) error {
	soft, hard, err := load.RaiseFileLimit()
	if err != nil {
		return nil // not knowable here; dialing will report what fails
	}
	const reserve = 32 // stdin/out/err, the target process, profiles, files we write
	if uint64(conns)+reserve > soft {
		return usagef("cannot open %d connections: the open-file limit is %d (hard limit %d), so at most %d; raise it with `ulimit -n %d` (as root, or in /etc/security/limits.conf)",
			conns, soft, hard, max(int64(soft)-reserve, 0), conns+reserve)
	}
	return nil
}

// runFlags are run's own flags: how to print and where to save its one result.
type runFlags struct {
	rf                                  repeatFlags
	latency, uncorrected, asJSON, quiet *bool
	out, cpuprofile, bench              *string
	resultsDir                          *string
	runDir                              string // under --results-dir, named for the target
}

func (f *runFlags) register(fs *pflag.FlagSet) {
	f.rf.register(fs)
	f.latency = fs.Bool("latency", false, "print the latency distribution (open loop: with the detailed percentile spectrum)")
	f.uncorrected = fs.BoolP("u_latency", "U", false, "open loop: also print the uncorrected latency distribution")
	f.asJSON = fs.Bool("json", false, "print the result as JSON (run.json) instead of text")
	f.out = fs.StringP("out", "o", "", "save the result (run.json) to this file")
	f.resultsDir = fs.String("results-dir", "", "also write the run's directory (run.json, report.html, charts, .dat, bench.txt) as a new directory under this one, named for the target (`apiperf k8s --results-pvc` sets it)")
	f.quiet = fs.BoolP("quiet", "q", false, "print nothing but the result")
	f.cpuprofile = fs.String("cpuprofile", "", "write apiperf's own CPU profile to this file (to tune the engine)")
	f.bench = fs.String("bench", "", "also write the result in Go benchmark format to this file (for benchstat)")
}

func cmdRun(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet("run", e)
	c := newLoadCmd(fs, e, false, true)
	var f runFlags
	f.register(fs)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: apiperf run [flags] URL\n\nLoad URL and print a wrk-style summary.\n\n%s", fs.FlagUsages()+exitCodes)
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	pos, extra := splitDash(fs)
	if len(pos) != 1 {
		if len(pos) == 0 {
			return usagef("run: no URL given (usage: apiperf run [flags] URL [-- script args])")
		}
		return usagef("run: want one URL, got %s: %s", report.Plural(len(pos), "argument"), strings.Join(pos, " "))
	}
	sc, cfg, expected, err := c.check(fs, pos[0])
	if err != nil || e.checkOnly {
		return err
	}
	s, err := c.prepare(ctx, e, sc, cfg, cfg.Conns(), expected, extra, *f.quiet)
	if err != nil {
		return err
	}
	doc := newRun(result.KindRun, s.src.scenario, cfg, args)
	if err := errors.Join(f.rf.validate(), c.hf.check(), checkFiles(*f.out, *f.bench, *f.cpuprofile, c.lv.hlog)); err != nil {
		return asUsage(err)
	}
	if err := f.makeRunDir(e, s); err != nil {
		return asUsage(err)
	}
	// a run's summary shows the target's process for --target-pid only
	if err := s.begin(ctx, doc, cfg, "", false); err != nil {
		return err
	}
	defer s.close()
	if err := f.load(ctx, s, cfg); err != nil {
		return err
	}
	objective := c.ci.judge(e, doc) // in run.json too
	if err := f.print(s); err != nil {
		return err
	}
	if err := f.save(ctx, s); err != nil {
		return err
	}
	s.serve(ctx, f.runDir) // --serve-results
	if err := c.ci.finish(e, "run", doc.Scenario.URL, doc.Start, []*result.Run{doc}, nil); err != nil {
		return err
	}
	return s.outcome(ctx, "run", nil, objective)
}

// load prints the header and runs the run's steps (--count repetitions) in the session.
func (f *runFlags) load(ctx context.Context, s *loadSession, cfg load.Config) error {
	e, doc := s.e, s.doc
	if !*f.quiet { // before wrk's header, so that on a terminal it does not split it
		fmt.Fprintf(e.stderr, "apiperf: %s, %s\n", s.src.describe(), cfg)
	}
	if s.coord != nil { // the header's threads are the workers', refined by end
		doc.Cluster = &cluster.Record{Workers: s.c.cf.workers, Threads: s.coord.Threads(cfg)}
	}
	if !*f.asJSON {
		if err := report.Header(e.stdout, doc); err != nil {
			return err
		}
	}
	s.watch.Begin(live.Phase{Label: sweep.ConfigLabel(cfg), Load: cfg, Endpoints: s.src.Endpoints()})
	opts := append([]load.Option{load.WithExpected(s.expected)}, s.watch.Options()...)
	stopProfile, err := startCPUProfile(*f.cpuprofile)
	if err != nil {
		s.watch.Close(ctx)
		return err
	}
	steps, err := sweep.Repeat(ctx, cfg, f.rf.count, s.step(func(ctx context.Context, cfg load.Config) (*measure.Step, error) {
		return load.Run(ctx, cfg, s.src, s.tgt, opts...)
	}), s.hooks(nil))
	stopProfile()
	s.end(ctx, steps)
	if err != nil {
		return err
	}
	doc.End = time.Now().UTC()
	s.finishCapture(profileOutDir(*f.out))
	return nil
}

// print prints the run's result: run.json with --json, else its summary (report.Summary),
// then the script's done.
func (f *runFlags) print(s *loadSession) error {
	e, doc := s.e, s.doc
	if *f.asJSON {
		b, err := doc.Encode()
		if err != nil {
			return err
		}
		e.stdout.Write(b)
	} else if err := report.Summary(e.stdout, doc, report.SummaryOptions{TopN: s.capture.TopN, ProfileDir: profileOutDir(*f.out),
		TextOptions: report.TextOptions{Latency: *f.latency, Uncorrected: *f.uncorrected}}); err != nil {
		return err
	}
	if s.src.done != nil {
		return s.src.done(e.stdout, doc.Steps[len(doc.Steps)-1])
	}
	return nil
}

// makeRunDir makes --results-dir's new directory for the run before any load, so that one
// that cannot be written fails first.
func (f *runFlags) makeRunDir(e *env, s *loadSession) error {
	if *f.resultsDir == "" {
		return nil
	}
	name, err := runDirName(e, *f.resultsDir, "", report.SafeName(s.tgt.Host+"-"+s.tgt.Port), s.c.hf)
	if err != nil {
		return err
	}
	f.runDir = filepath.Join(*f.resultsDir, name)
	return nil
}

// save writes -o's run.json, --bench's file and --results-dir's directory and records the run in the history (a
// history that cannot record is a warning).
func (f *runFlags) save(ctx context.Context, s *loadSession) error {
	e, doc := s.e, s.doc
	if *f.out != "" {
		if err := doc.Save(*f.out); err != nil {
			return fmt.Errorf("%w (%s)", err, notRecorded)
		}
		if !*f.quiet {
			fmt.Fprintf(e.stderr, "apiperf: saved %s\n", *f.out)
		}
	}
	if *f.bench != "" {
		if err := writeBenchFile(*f.bench, doc); err != nil {
			return err
		}
	}
	if f.runDir != "" {
		if err := writeRunDir(f.runDir, doc); err != nil {
			return fmt.Errorf("--results-dir: %w (%s)", err, notRecorded)
		}
		if !*f.quiet {
			fmt.Fprintf(e.stderr, "apiperf: saved %s\n", f.runDir)
		}
	}
	if err := s.c.hf.record(ctx, e, doc); err != nil {
		fmt.Fprintf(e.stderr, "apiperf: warning: recording history: %v\n", err)
	}
	return nil
}

// newRun starts a run document with the redacted spec and command line.
func newRun(kind string, sc scenario.Scenario, cfg load.Config, args []string) *result.Run {
	host, _ := os.Hostname()
	r := &result.Run{
		Version: result.Version, Tool: "apiperf " + version(), Kind: kind,
		Command: append([]string{"apiperf", kind}, args...), Host: host,
		Scenario: sc, Load: cfg, Start: time.Now().UTC(),
	}
	r.Redact()
	return r
}

// splitDash returns the positional arguments before "--" and the words after it (passed to
// a script's init, as wrk does).
func splitDash(fs *pflag.FlagSet) (pos, extra []string) {
	args := fs.Args()
	if at := fs.ArgsLenAtDash(); at >= 0 {
		return args[:at], args[at:]
	}
	return args, nil
}

// startCPUProfile profiles apiperf itself into path (nothing when path is empty).
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := outfile.Create(path)
	if err != nil {
		return nil, asUsage(fmt.Errorf("cpu profile: %w", err))
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// writeBenchFile writes doc in Go benchmark format to path.
func writeBenchFile(path string, doc *result.Run) error {
	var b bytes.Buffer
	if err := report.WriteBench(&b, doc); err != nil {
		return err
	}
	if err := outfile.Write(path, b.Bytes()); err != nil {
		return fmt.Errorf("writing benchmark file: %w", err)
	}
	return nil
}
