package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/apiperf/apiperf/compare"
	"github.com/apiperf/apiperf/conditions"
	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/procfs"
	"github.com/apiperf/apiperf/report"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/sample"
	"github.com/apiperf/apiperf/scenario"
	"github.com/apiperf/apiperf/sweep"
)

// abFlags are ab's flags: the load of each side, the plan of pairs and levels, the
// budgets, the outputs.
type abFlags struct {
	lf                  *loadFlags
	sf                  *sourceFlags
	hf                  *historyFlags
	ci                  ciFlags // --objective (each side), --junit (objective.go)
	cfg                 compare.GateConfig
	pairs, maxPairs     *int
	pidA, pidB          *int
	warmup              time.Duration
	levels, rates       *string
	mdOut, jsonOut, out *string
	strict, quiet       *bool
	labelsA, labelsB    *[]string
}

func (f *abFlags) register(fs *pflag.FlagSet, e *env) {
	f.lf = &loadFlags{}
	f.sf = &sourceFlags{stdout: e.stdout, load: f.lf}
	f.lf.register(fs)
	e.redact = &f.lf.redact // what ab prints is redacted with the --redact names too
	f.sf.register(fs)
	f.cfg = compare.DefaultGateConfig
	f.pairs = fs.Int("count", compare.DefaultPairs, "A/B pairs per level (ABBA order) before the first look, and between looks")
	f.maxPairs = fs.Int("max-pairs", 0, "add pairs (--count at a time) until the comparison is settled or this many pairs ran; --count: judge once (default 3 x --count)")
	f.warmup = compare.DefaultABWarmup
	fs.Var(durationValue{&f.warmup}, "warmup", "unmeasured load before every step, on the target about to be measured")
	f.levels = fs.String("levels", "", "run at these concurrency levels, A and B alternating at each (default: -c)")
	f.rates = fs.String("rates", "", "open loop: run at these rates, A and B alternating at each")
	fs.Var(percentValue{&f.cfg.MaxQPSDrop}, "max-qps-drop", "fail when B's QPS is below A's by more than this, significantly")
	fs.Var(percentValue{&f.cfg.MaxP99Rise}, "max-p99-rise", "fail when B's p99 latency is above A's by more than this, significantly")
	fs.Var(percentValue{&f.cfg.MaxErrorRate}, "max-error-rate", "fail when B's error rate is above this and significantly above A's")
	fs.Var(percentValue{&f.cfg.MaxCPURise}, "max-cpu-rise", "with --pid-a and --pid-b: fail when B's CPU time per request is above A's by more than this, significantly")
	fs.Float64Var(&f.cfg.Alpha, "alpha", compare.DefaultAlpha, "significance level, shared by all checks (Bonferroni)")
	f.pidA = fs.Int("pid-a", 0, "process id of target A: also compare the CPU time it spends per request (Linux, /proc)")
	f.pidB = fs.Int("pid-b", 0, "process id of target B (with --pid-a)")
	f.mdOut = fs.String("markdown", "", "write a Markdown summary (for a pull-request comment) to this file (- for stdout)")
	f.jsonOut = fs.String("json", "", "write the result as JSON to this file (- for stdout)")
	f.out = fs.StringP("out", "o", "", "save A's and B's runs as DIR/a.json and DIR/b.json")
	f.strict = strictConditionsFlag(fs) // conditions.go
	f.quiet = fs.BoolP("quiet", "q", false, "print no progress")
	f.hf = &historyFlags{}
	f.hf.register(fs)
	f.ci.register(fs, true)
	f.labelsA = fs.StringArray("label-a", nil, "label A's run key=value in the history (repeatable; --label labels both)")
	f.labelsB = fs.StringArray("label-b", nil, "label B's run key=value in the history (repeatable)")
}

// abJob is one comparison, checked: each side's scenario, the load, the plan and its
// sequential looks, each side's labels.
type abJob struct {
	f            *abFlags
	e            *env
	scA, scB     scenario.Scenario
	lcfg         load.Config
	expected     measure.StatusSet
	plan         sweep.Plan
	seq          sweep.ABSequence
	looks        int
	labels       map[string]map[string]string
	docA, docB   *result.Run
	condA, condB *conditions.Session
}

// check reads both URLs' loads, the plan and the labels from the flags, reporting every
// problem at once (exit 2), then checks the outputs, the file limit and the processes.
func (f *abFlags) check(fs *pflag.FlagSet, e *env, pos []string) (*abJob, error) {
	j := &abJob{f: f, e: e, labels: map[string]map[string]string{}}
	var errs []error
	var err error
	j.scA, j.lcfg, j.expected, err = f.lf.build(fs, pos[0])
	errs = append(errs, err)
	j.scB, _, _, err = f.lf.build(fs, pos[1])
	errs = append(errs, err)
	j.plan, err = abPlan(j.lcfg, *f.levels, *f.rates, f.warmup, *f.pairs)
	errs = append(errs, err, f.cfg.Validate())
	cpu := *f.pidA != 0 || *f.pidB != 0
	if cpu {
		errs = append(errs, checkPids(*f.pidA, *f.pidB))
	}
	if *f.maxPairs == 0 {
		*f.maxPairs = compare.DefaultLooks * *f.pairs
	}
	if *f.maxPairs < *f.pairs || *f.maxPairs > 1000 {
		errs = append(errs, fmt.Errorf("--max-pairs %d: want --count (%d) to 1000", *f.maxPairs, *f.pairs))
	}
	var checks, need int
	j.seq, checks, j.looks, need = compare.ABSequence(f.cfg, j.plan.Len(), cpu, *f.pairs, *f.maxPairs)
	if err == nil && *f.pairs < need {
		errs = append(errs, fmt.Errorf("--count %d: %d pairs cannot show a significant change at alpha %g over %d checks x %d looks; use --count %d or more (10 is a good start)",
			*f.pairs, *f.pairs, f.cfg.Alpha, checks, j.looks, need))
	}
	for side, extra := range map[string][]string{sweep.SideA: *f.labelsA, sweep.SideB: *f.labelsB} {
		l, err := parseLabels(append(slices.Clone(f.hf.labels), extra...))
		errs = append(errs, err)
		j.labels[side] = l
	}
	if err := errors.Join(errs...); err != nil {
		return nil, asUsage(fmt.Errorf("ab: %w", err))
	}
	if err := errors.Join(f.ci.check(), f.hf.check(), checkFiles(*f.mdOut, *f.jsonOut)); err != nil {
		return nil, err
	}
	if *f.out != "" {
		if err := checkRunDir(filepath.Dir(*f.out), filepath.Base(*f.out)); err != nil {
			return nil, err
		}
	}
	return j, checkFileLimit(j.plan.MaxConnections(j.lcfg))
}

func cmdAB(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet("ab", e)
	var f abFlags
	f.register(fs, e)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: apiperf ab [flags] URL_A URL_B\n\n"+
			"Compare B against A by running them alternately (pairs in ABBA order, same load, warmup and window),\n"+
			"so that drift of the machine hits both alike; a paired test on the per-pair changes decides.\n"+
			"Fail (exit 1) when B is significantly and over budget slower than A. Exit 2: bad input. Exit 3:\n"+
			"inconclusive (B's estimate over budget, not significant: more pairs or less noise may decide).\n"+
			"In CI: build the base and the candidate server, start both on two ports, run apiperf ab.\n\n%s", fs.FlagUsages())
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	pos, extra := splitDash(fs)
	if len(pos) != 2 {
		return usagef("ab: want two URLs, A and B, got %d argument(s) (usage: apiperf ab [flags] URL_A URL_B)", len(pos))
	}
	j, err := f.check(fs, e, pos)
	if err != nil {
		return err
	}
	run, err := j.run(ctx, args, extra)
	if run == nil {
		return err
	}
	if err != nil {
		return fmt.Errorf("ab: %w", err)
	}
	return j.finish(ctx, run)
}

// run builds both sides' sources and documents and runs the pairs, each side's conditions
// sampled around its steps.
func (j *abJob) run(ctx context.Context, args, extra []string) (*sweep.ABRun, error) {
	f, e, lcfg := j.f, j.e, j.lcfg
	srcA, err := f.sf.build(ctx, j.scA, extra)
	if err != nil {
		return nil, asUsage(err)
	}
	srcB, err := f.sf.build(ctx, j.scB, extra)
	if err != nil {
		return nil, asUsage(err)
	}
	tgtA, _ := scenario.ParseTarget(srcA.scenario.URL)
	tgtB, _ := scenario.ParseTarget(srcB.scenario.URL)
	j.docA, j.docB = newRun(result.KindRun, srcA.scenario, lcfg, args), newRun(result.KindRun, srcB.scenario, lcfg, args)
	j.docA.Name, j.docB.Name = "A", "B"
	id := strconv.FormatInt(j.docA.Start.UnixNano(), 10)
	for side, d := range map[string]*result.Run{sweep.SideA: j.docA, sweep.SideB: j.docB} {
		d.Command[1] = "ab"
		d.Labels = j.labels[side]
		d.Labels[abLabel], d.Labels[abSideLabel] = id, side
	}
	if !*f.quiet {
		fmt.Fprintf(e.stderr, "apiperf: ab A=%s B=%s at %s: pairs in ABBA order, %s measured per step on %d threads\n",
			j.docA.Scenario.URL, j.docB.Scenario.URL, j.plan, perLevel(lcfg), lcfg.Threads)
	}
	tfA, tfB := &targetFlags{pid: *f.pidA}, &targetFlags{pid: *f.pidB}
	j.condA = startConditions(ctx, lcfg, tgtA, tfA, findProcess(tfA, tgtA), f.lf.redact) // conditions.go
	j.condB = startConditions(ctx, lcfg, tgtB, tfB, findProcess(tfB, tgtB), f.lf.redact)
	stepA := sampled(j.condA, lcfg, j.step(srcA, tgtA, *f.pidA))
	stepB := sampled(j.condB, lcfg, j.step(srcB, tgtB, *f.pidB))
	return sweep.RunAB(ctx, j.plan, lcfg, stepA, stepB, j.seq, j.progress)
}

// step is one side's step function: the load, and with pid the CPU time the target's
// process spent in it (/proc).
func (j *abJob) step(src *source, tgt scenario.Target, pid int) sweep.StepFunc {
	opts := []load.Option{load.WithExpected(j.expected)}
	return func(ctx context.Context, c load.Config) (*measure.Step, error) {
		if pid == 0 {
			return load.Run(ctx, c, src, tgt, opts...)
		}
		before, err := procfs.ReadSched(pid)
		if err != nil {
			return nil, err
		}
		s, err := load.Run(ctx, c, src, tgt, opts...)
		if err != nil {
			return s, err
		}
		after, err := procfs.ReadSched(pid)
		if err != nil {
			return nil, err
		}
		s.TargetCPU = measure.Duration(after.Run - before.Run)
		return s, nil
	}
}

// progress prints one line per measured step (not with --quiet).
func (j *abJob) progress(s sweep.ABStep) {
	if *j.f.quiet {
		return
	}
	cpu := ""
	if s.Step.TargetCPU > 0 && s.Step.Requests > 0 {
		cpu = fmt.Sprintf(", target CPU %.1f µs/request", float64(s.Step.TargetCPU.Duration().Microseconds())/float64(s.Step.Requests))
	}
	fmt.Fprintf(j.e.stderr, "apiperf: %s pair %d (of up to %d) %s: %.1f req/s, p99 %.3f ms%s\n", s.Step.Label, s.Pair+1, s.Pairs, s.Side,
		s.Step.QPS(), sample.Median(compare.GateSamples(compare.MetricP99, []*measure.Step{s.Step})), cpu)
}

// finish keeps the pairs in both documents, judges each side's objective, records and
// saves them, then compares B with A and writes the result where asked.
func (j *abJob) finish(ctx context.Context, run *sweep.ABRun) error {
	f, e, docA, docB := j.f, j.e, j.docA, j.docB
	for _, steps := range [][]*measure.Step{run.A, run.B} {
		if err := checkOutcome(e, steps); err != nil {
			return err // a side where nothing succeeded cannot be compared
		}
	}
	docA.Steps, docB.Steps = run.A, run.B
	docA.Conditions, docB.Conditions = j.condA.Record(), j.condB.Record()
	id := docA.Labels[abLabel]
	for side, d := range map[string]*result.Run{sweep.SideA: docA, sweep.SideB: docB} {
		d.AB = &sweep.ABRecord{ID: id, Side: side, Every: *f.pairs, Max: *f.maxPairs, Looks: j.looks, Pairs: run.Pairs, Order: run.Order}
	}
	objective := errors.Join(f.ci.judge(e, docA), f.ci.judge(e, docB)) // each side against --objective
	for _, d := range []*result.Run{docA, docB} {
		if err := f.hf.record(ctx, e, d); err != nil {
			return err
		}
	}
	docA.End, docB.End = time.Now().UTC(), time.Now().UTC()
	if err := j.save(); err != nil {
		return err
	}
	res, err := compare.AB(docA, docB, f.cfg)
	if err != nil {
		return fmt.Errorf("ab: %w", err)
	}
	res.A, res.B = docA.Scenario.URL, docB.Scenario.URL
	res.SetConditions(compare.CheckConditions(docA, docB, "A", "B"))
	if ctx.Err() != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("interrupted: compared the %d pair(s) measured", len(run.B)))
	}
	res.StrictConditions = *f.strict
	err = abReport(e, res, *f.mdOut, *f.jsonOut, ctx.Err() != nil)
	for _, d := range []*result.Run{docA, docB} {
		if rerr := report.ObjectiveLines(e.stderr, d); rerr != nil {
			return rerr
		}
	}
	reports := errors.Join(f.ci.finish(e, "ab", res.A+" vs "+res.B, docA.Start, []*result.Run{docA, docB}, report.CheckCases("ab", res.Lines())),
		summarize(res.Markdown))
	return ciOutcome(err, reports, objective)
}

// save writes -o's DIR/a.json and DIR/b.json.
func (j *abJob) save() error {
	if *j.f.out == "" {
		return nil
	}
	if err := os.MkdirAll(*j.f.out, 0o755); err != nil {
		return fmt.Errorf("ab: %w", err)
	}
	for name, d := range map[string]*result.Run{"a.json": j.docA, "b.json": j.docB} {
		if err := d.Save(filepath.Join(*j.f.out, name)); err != nil {
			return err
		}
	}
	return nil
}

// Labels of the two runs an `ab` comparison records in the history: the comparison's id
// (shared) and the side.
const (
	abLabel     = "ab"
	abSideLabel = "ab-side"
)

// checkPids checks that both target processes can be watched before any load is sent.
func checkPids(a, b int) error {
	if a == 0 || b == 0 {
		return errors.New("give both --pid-a and --pid-b, or neither")
	}
	var errs []error
	for _, pid := range []int{a, b} {
		if _, err := procfs.ReadSched(pid); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// abPlan is the plan of levels `ab` alternates A and B at: --levels or --rates, else the
// one level of -c or -R.
func abPlan(cfg load.Config, levels, rates string, warmup time.Duration, pairs int) (sweep.Plan, error) {
	plan := sweep.Plan{Warmup: measure.Duration(warmup), Count: pairs}
	var errs []error
	switch {
	case levels != "" && rates != "":
		errs = append(errs, errors.New("give --levels or --rates, not both"))
	case levels != "":
		lv, err := parseLevels(levels)
		errs = append(errs, err)
		plan.Levels = lv
	case rates != "":
		rs, err := parseRates(rates)
		errs = append(errs, err)
		plan.Rates = rs
	case cfg.OpenLoop():
		plan.Rates = []float64{cfg.Rate}
	default:
		plan.Levels = []int{cfg.Connections}
	}
	if pairs < 1 || pairs > 1000 {
		errs = append(errs, fmt.Errorf("--count %d: want 1 to 1000 pairs", pairs))
	}
	if err := errors.Join(errs...); err != nil {
		return plan, err
	}
	return plan, plan.Validate()
}

// abReport writes the result where asked (text on stdout unless stdout holds JSON or
// Markdown) and returns the exit status: failed on a regression or an interruption,
// inconclusive when the result is.
func abReport(e *env, res *compare.ABResult, mdOut, jsonOut string, interrupted bool) error {
	if err := writeResults(e, mdOut, jsonOut, res.Markdown, res.JSON, res.Text); err != nil {
		return err
	}
	if o := res.Outcome(); o == compare.OutcomeFail || !interrupted {
		return outcomeErr(o, res.Conditions)
	}
	return fmt.Errorf("interrupted: %w", errFailed)
}

// writeResults writes a comparison's Markdown and JSON where asked (- for stdout) and its
// text on stdout, or on stderr when stdout holds one of the others.
func writeResults(e *env, mdOut, jsonOut string, markdown func(io.Writer) error, asJSON func() ([]byte, error), text func(io.Writer) error) error {
	toStdout := false
	if mdOut != "" {
		toStdout = toStdout || mdOut == "-"
		if err := writeOut(e, mdOut, markdown); err != nil {
			return err
		}
	}
	if jsonOut != "" {
		toStdout = toStdout || jsonOut == "-"
		b, err := asJSON()
		if err != nil {
			return err
		}
		if err := writeOut(e, jsonOut, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
			return err
		}
	}
	if toStdout {
		return text(e.stderr)
	}
	return text(e.stdout)
}
