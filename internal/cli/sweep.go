package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/apiperf/apiperf/compare"
	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/report"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/scenario"
	"github.com/apiperf/apiperf/sweep"
	"github.com/apiperf/apiperf/target"
)

// DefaultSweepDir is where sweep run directories go unless --dir says otherwise.
const DefaultSweepDir = "apiperf-out"

// nativePath is the plain net/http yardstick of the built-in target.
const nativePath = "/healthz"

// sweepFlags are the flags only `sweep` has.
type sweepFlags struct {
	levels, rates string
	warmup        time.Duration
	count         int
	slo           string
	minSuccess    float64
	maxDeclines   int
	noFileLimit   bool
	noStop        bool
	vsNative      bool
	dir, name     string
	quiet         bool
	noReport      bool
}

func (f *sweepFlags) register(fs *pflag.FlagSet) {
	f.warmup = sweep.DefaultWarmup
	fs.StringVar(&f.levels, "levels", joinInts(sweep.DefaultLevels), "concurrency levels to run, ascending (k suffixes: 200,500,1k)")
	fs.StringVar(&f.rates, "rates", "", "open loop: sweep these request rates instead of concurrency levels (1k,2k,5k)")
	fs.Var(durationValue{&f.warmup}, "warmup", "unmeasured load before each level (0 for none)")
	fs.IntVar(&f.count, "count", 1, "measure each level this many times (the analysis uses the median)")
	fs.StringVar(&f.slo, "slo", sweep.DefaultObjective, "objective a level must meet to count toward the knee (p50/p90/p99/p99.9<=D, success>=P%, errors<=P%, qps>=N)")
	fs.Float64Var(&f.minSuccess, "min-success", sweep.DefaultRules.MinSuccess, "stop after a level whose success rate (%) is below this (0: never)")
	fs.IntVar(&f.maxDeclines, "max-declines", sweep.DefaultRules.MaxDeclines, "stop after this many levels in a row whose QPS is below the best so far (0: never)")
	fs.BoolVar(&f.noFileLimit, "no-file-limit-stop", false, "try levels that need more connections than the open-file limit allows")
	fs.BoolVar(&f.noStop, "no-stop", false, "run every level: turn all stop rules off")
	fs.BoolVar(&f.vsNative, "vs-native", false, "then run the same plan against the built-in plain net/http target and compare")
	fs.StringVar(&f.dir, "dir", DefaultSweepDir, "directory of run directories")
	fs.StringVar(&f.name, "name", "", "run directory and file name (default: the target's host-port)")
	fs.BoolVar(&f.noReport, "no-report", false, "write run.json only (render the rest later with apiperf report)")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "print nothing on stderr but warnings and errors")
}

// build checks the sweep flags and returns the plan, objective and stop rules, reporting every
// problem at once. quick says no URL was given, so the laptop plan applies unless overridden.
func (f *sweepFlags) build(fs *pflag.FlagSet, quick bool) (sweep.Plan, sweep.Objective, sweep.Rules, []error) {
	var errs []error
	plan := sweep.Plan{Warmup: measure.Duration(f.warmup), Count: f.count}
	if quick {
		q := sweep.QuickPlan()
		plan.Levels = q.Levels
		if !fs.Changed("warmup") {
			plan.Warmup = q.Warmup
		}
	}
	if fs.Changed("levels") || !quick {
		lv, err := parseLevels(f.levels)
		if err != nil {
			errs = append(errs, err)
		}
		plan.Levels = lv
	}
	if fs.Changed("rates") {
		if fs.Changed("levels") {
			errs = append(errs, errors.New("give --levels or --rates, not both"))
		}
		rs, err := parseRates(f.rates)
		if err != nil {
			errs = append(errs, err)
		}
		plan.Levels, plan.Rates = nil, rs
	}
	if f.count < 1 {
		errs = append(errs, fmt.Errorf("--count must be at least 1, got %d", f.count))
	}
	if err := plan.Validate(); err != nil && len(errs) == 0 {
		errs = append(errs, err)
	}
	obj, err := sweep.ParseObjective(f.slo)
	if err == nil {
		err = requireObjective(f.slo)
	}
	if err != nil {
		errs = append(errs, fmt.Errorf("--slo: %w", err))
	}
	rules := sweep.Rules{MinSuccess: f.minSuccess, MaxDeclines: f.maxDeclines, FileLimit: !f.noFileLimit}
	if f.noStop {
		rules = sweep.Rules{}
	}
	if err := rules.Validate(); err != nil {
		errs = append(errs, err)
	}
	return plan, obj, rules, errs
}

// parseLevels reads "200,500,1k".
func parseLevels(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		var n int
		if err := (intCount{&n}).Set(part); err != nil {
			return nil, fmt.Errorf("--levels: %w", err)
		}
		out = append(out, n)
	}
	return out, nil
}

// parseRates reads "500,1k,2.5k".
func parseRates(s string) ([]float64, error) {
	var out []float64
	for _, part := range strings.Split(s, ",") {
		var r float64
		if err := (rateValue{&r}).Set(part); err != nil {
			return nil, fmt.Errorf("--rates: %w", err)
		}
		out = append(out, r)
	}
	return out, nil
}

func joinInts(vs []int) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = fmt.Sprint(v)
	}
	return strings.Join(parts, ",")
}

func cmdSweep(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet("sweep", e)
	c := newLoadCmd(fs, e, true, true)
	var wf sweepFlags
	wf.register(fs)
	var vf variantFlags // --variant, --variant-pid (variants.go)
	vf.register(fs)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: apiperf sweep [flags] [URL]\n       apiperf sweep [flags] --variant NAME=URL --variant NAME=URL ...\n\nRun the load at each level, find the peak and the knee, and write run.json, the .dat file,\ncharts and report.html to <dir>/<name>/ (<name>: the target's host-port, then -2, -3 for the next runs,\nunless --name). Without a URL, sweep the built-in target with a short plan.\nWith --variant, sweep each variant with the same plan into <dir>/<NAME>/, then compare them\n(the first as the reference) into <dir>/compare/.\n\n%s", fs.FlagUsages()+exitCodes)
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	pos, extra := splitDash(fs)
	variants := vf.given()
	switch {
	case len(pos) > 1:
		return usagef("sweep: want at most one URL, got %s: %s", report.Plural(len(pos), "argument"), strings.Join(pos, " "))
	case variants && len(pos) > 0:
		return usagef("sweep: give a URL or --variant NAME=URL, not both (got %s)", pos[0])
	}
	quick := len(pos) == 0 && !variants
	errs := sweepFlagProblems(fs, &wf, quick)
	if quick && !fs.Changed("duration") {
		c.lf.duration = sweep.QuickDuration
	}
	plan, obj, rules, perrs := wf.build(fs, quick)
	errs = append(errs, perrs...)
	url := "http://127.0.0.1" + nativePath // checked now, replaced once the built-in target runs
	var targets []compare.VariantSpec
	switch {
	case variants:
		var verrs []error
		targets, verrs = vf.targets(fs, &c.tf)
		errs = append(errs, verrs...)
		for _, name := range append(targetNames(targets), compare.ReservedName) {
			errs = append(errs, checkRunDir(wf.dir, name))
		}
		if len(targets) > 0 {
			url = targets[0].URL
		}
	case !quick:
		url = pos[0]
	}
	sc, cfg, expected, err := c.check(fs, url, errs...)
	if err != nil || e.checkOnly {
		return err
	}
	j := &sweepJob{e: e, args: args, c: c, wf: &wf, plan: plan, obj: obj, rules: rules, cfg: cfg, expected: expected, extra: extra}
	if variants {
		return j.variants(ctx, sc, targets, c.tf)
	}
	if quick {
		p, err := spawnTarget(ctx)
		if err != nil {
			return err
		}
		defer p.Stop()
		sc.URL = p.URL() + nativePath
	}
	_, _, err = j.one(ctx, sc, wf.name, c.tf, wf.vsNative)
	return err
}

// sweepFlagProblems are the flags sweep refuses: one rate or one level where it sweeps
// them, --vs-native without a URL.
func sweepFlagProblems(fs *pflag.FlagSet, wf *sweepFlags, quick bool) []error {
	var errs []error
	if fs.Changed("rate") {
		errs = append(errs, errors.New("sweep: -R/--rate sets one rate; sweep rates with --rates"))
	}
	if fs.Changed("connections") && !fs.Changed("rates") {
		errs = append(errs, errors.New("sweep: -c/--connections sets one level; sweep concurrency with --levels"))
	}
	if quick && wf.vsNative {
		errs = append(errs, errors.New("--vs-native needs a URL (without one, the sweep already runs against the built-in plain target)"))
	}
	return errs
}

// sweepJob is a sweep checked before any traffic: what one target's sweep needs besides
// its scenario, name and capture (a variant sweep runs it once per variant).
type sweepJob struct {
	e        *env
	args     []string
	c        *loadCmd
	wf       *sweepFlags
	plan     sweep.Plan
	obj      sweep.Objective
	rules    sweep.Rules
	cfg      load.Config
	expected measure.StatusSet
	extra    []string
}

func (j *sweepJob) one(ctx context.Context, sc scenario.Scenario, name string, tf targetFlags, vsNative bool) (*result.Run, string, error) {
	e, wf, cfg, plan := j.e, j.wf, j.cfg, j.plan
	s, err := j.c.prepare(ctx, e, sc, plan.Config(cfg, plan.Len()-1), 0, j.expected, j.extra, wf.quiet)
	if err != nil {
		return nil, "", err
	}
	s.tf = &tf
	sc = s.src.scenario
	name, err = runDirName(e, wf.dir, name, report.SafeName(s.tgt.Host+"-"+s.tgt.Port), j.c.hf)
	if err != nil {
		return nil, "", err
	}
	dir := filepath.Join(wf.dir, name)
	doc := newRun(result.KindSweep, sc, cfg, j.args)
	doc.Name = name
	doc.Sweep = sweep.NewRecord(plan, j.obj, j.rules)
	if !wf.quiet {
		fmt.Fprintf(e.stderr, "apiperf: sweep %s%s at %s, %s per level on %d threads, timeout %v; objective %s; %s; writing %s\n",
			sc.Redact(), cfg.Over(), plan, perLevel(cfg), cfg.Threads, cfg.Timeout, j.obj, j.rules, dir)
	}
	if err := s.begin(ctx, doc, cfg, filepath.Join(dir, "hlog"), true); err != nil { // one <level>.hlog per level
		return nil, "", err
	}
	defer s.close()
	eng := newEngine(e, wf.quiet, s.src, s.tgt, j.expected)
	eng.watch = s.watch
	runPath := filepath.Join(dir, "run.json")
	r := sweep.Runner{Base: cfg, Step: s.step(eng.step), Hook: s.hooks(eng.progress), FileLimit: checkFileLimit,
		Save: func(steps []*measure.Step) error {
			doc.Steps, doc.End, doc.Conditions = steps, time.Now().UTC(), s.record()
			return doc.Save(runPath)
		}}
	steps, err := r.Run(ctx, doc.Sweep)
	s.end(ctx, steps)
	if err != nil {
		return doc, dir, fmt.Errorf("sweep: %w", err)
	}
	stopped(e, doc, "")
	if vsNative && ctx.Err() == nil && len(doc.Sweep.Levels) > 0 {
		if err := runNative(ctx, e, doc, r, wf.quiet, runPath); err != nil {
			doc.Warnings = append(doc.Warnings, fmt.Sprintf("--vs-native: %v", err))
			fmt.Fprintf(e.stderr, "apiperf: warning: --vs-native: %v\n", err)
		}
	}
	s.finishCapture(dir)
	err = finishSweep(ctx, e, doc, dir, wf.noReport, j.c.hf, &j.c.ci, s.capture.TopN)
	s.serve(ctx, dir) // --serve-results: the finished directory, then the outcome
	if err != nil {
		return doc, dir, err
	}
	return doc, dir, s.outcome(ctx, "sweep", nil, nil)
}

// stopped reports why a sweep stopped early, if it did (what prefixes the line: "" or
// "plain net/http: ").
func stopped(e *env, doc *result.Run, what string) {
	if st := doc.Sweep.Stop; st != nil {
		if st.Rule != sweep.RuleGeneratorLimit { // checkOutcome says that one, once
			fmt.Fprintf(e.stderr, "apiperf: %s%s\n", what, st)
		}
		doc.Warnings = append(doc.Warnings, "the sweep "+st.String())
	}
}

// runNative runs the levels measured in doc against the built-in plain net/http target and
// keeps that sweep as doc.Native, with the comparison of both peaks in doc.Sweep.
func runNative(ctx context.Context, e *env, doc *result.Run, r sweep.Runner, quiet bool, runPath string) error {
	p, err := spawnTarget(ctx)
	if err != nil {
		return err
	}
	defer p.Stop()
	sc := scenario.Scenario{URL: p.URL() + nativePath}
	src, err := scenario.NewStatic(sc)
	if err != nil {
		return err
	}
	tgt, err := scenario.ParseTarget(sc.URL)
	if err != nil {
		return err
	}
	if !quiet {
		fmt.Fprintf(e.stderr, "apiperf: --vs-native: the same plan against plain net/http at %s\n", sc.URL)
	}
	nat := newRun(result.KindSweep, sc, r.Base, nil)
	nat.Command, nat.Name = nil, "plain net/http"
	doc.Native = nat
	eng := newEngine(e, quiet, src, tgt, measure.DefaultExpected())
	r.Hook = eng.progress
	r.Save = func(steps []*measure.Step) error { nat.Steps = steps; return doc.Save(runPath) }
	rec, steps, err := r.Native(ctx, doc.Sweep, eng.step)
	nat.Sweep, nat.Steps = rec, steps
	stopped(e, nat, "plain net/http: ")
	if err != nil {
		return err
	}
	if rec.Plan.Open() {
		doc.Warnings = append(doc.Warnings, "--vs-native with --rates: both runs are capped by the same target rates, so compare their latencies rather than their QPS")
	}
	return nil
}

// finishSweep analyses, saves and renders a sweep or capacity run, prints its table and
// headlines (then calls after, if not nil) and records it in the history.
func finishSweep(ctx context.Context, e *env, doc *result.Run, dir string, noReport bool, hf *historyFlags, ci *ciFlags, topN int) error {
	warnings := doc.Sweep.Analyze(doc.Steps)
	doc.Warnings = append(doc.Warnings, warnings...)
	doc.End = time.Now().UTC()
	doc.Judge()
	objective := ci.judge(e, doc) // saved in run.json, shown in report.html
	for _, w := range warnings {
		fmt.Fprintf(e.stderr, "apiperf: warning: %s\n", w)
	}
	runPath := filepath.Join(dir, "run.json")
	if err := doc.Save(runPath); err != nil {
		return fmt.Errorf("%s: %w (%s)", doc.Kind, err, notRecorded)
	}
	if err := report.Summary(e.stdout, doc, report.SummaryOptions{TopN: topN, ProfileDir: dir}); err != nil {
		return err
	}
	if len(doc.Steps) > 0 && !noReport {
		if _, err := report.WriteAll(dir, doc); err != nil {
			if herr := hf.record(ctx, e, doc); herr != nil {
				return fmt.Errorf("%s: %w; recording history: %v", doc.Kind, err, herr)
			}
			return fmt.Errorf("%s: %w", doc.Kind, err)
		}
		fmt.Fprintf(e.stdout, "report: %s\n", filepath.Join(dir, report.HTMLFile))
	} else {
		fmt.Fprintf(e.stdout, "run: %s\n", runPath)
	}
	if err := hf.record(ctx, e, doc); err != nil {
		fmt.Fprintf(e.stderr, "apiperf: warning: recording history: %v\n", err)
	}
	if err := ci.finish(e, doc.Kind, doc.Scenario.URL, doc.Start, []*result.Run{doc}, report.CapacityCases(doc.Capacity)); err != nil {
		return err
	}
	return objective
}

// perLevel says how long each level is measured: "2s" or "1000 requests".
func perLevel(cfg load.Config) string {
	if cfg.Duration == 0 {
		return fmt.Sprintf("%d requests", cfg.Requests)
	}
	return cfg.Duration.String()
}

// spawnTarget starts the built-in plain target as a child process (this same executable).
func spawnTarget(ctx context.Context) (*target.Process, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("starting the built-in target: %w", err)
	}
	p, err := target.Spawn(ctx, exe)
	if err != nil {
		return nil, fmt.Errorf("starting the built-in target: %w", err)
	}
	return p, nil
}
