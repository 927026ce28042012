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

	"github.com/apiperf/apiperf/compare"
	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/procfs"
	"github.com/apiperf/apiperf/report"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/sample"
	"github.com/apiperf/apiperf/scenario"
	"github.com/apiperf/apiperf/sweep"
)

func cmdAB(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet("ab", e)
	lf := &loadFlags{}
	sf := &sourceFlags{stdout: e.stdout, load: lf}
	lf.register(fs)
	e.redact = &lf.redact // what ab prints is redacted with the --redact names too
	sf.register(fs)
	cfg := compare.DefaultGateConfig
	pairs := fs.Int("count", compare.DefaultPairs, "A/B pairs per level (ABBA order) before the first look, and between looks")
	maxPairs := fs.Int("max-pairs", 0, "add pairs (--count at a time) until the comparison is settled or this many pairs ran; --count: judge once (default 3 x --count)")
	warmup := compare.DefaultABWarmup
	fs.Var(durationValue{&warmup}, "warmup", "unmeasured load before every step, on the target about to be measured")
	levels := fs.String("levels", "", "run at these concurrency levels, A and B alternating at each (default: -c)")
	rates := fs.String("rates", "", "open loop: run at these rates, A and B alternating at each")
	fs.Var(percentValue{&cfg.MaxQPSDrop}, "max-qps-drop", "fail when B's QPS is below A's by more than this, significantly")
	fs.Var(percentValue{&cfg.MaxP99Rise}, "max-p99-rise", "fail when B's p99 latency is above A's by more than this, significantly")
	fs.Var(percentValue{&cfg.MaxErrorRate}, "max-error-rate", "fail when B's error rate is above this and significantly above A's")
	fs.Var(percentValue{&cfg.MaxCPURise}, "max-cpu-rise", "with --pid-a and --pid-b: fail when B's CPU time per request is above A's by more than this, significantly")
	fs.Float64Var(&cfg.Alpha, "alpha", compare.DefaultAlpha, "significance level, shared by all checks (Bonferroni)")
	pidA := fs.Int("pid-a", 0, "process id of target A: also compare the CPU time it spends per request (Linux, /proc)")
	pidB := fs.Int("pid-b", 0, "process id of target B (with --pid-a)")
	mdOut := fs.String("markdown", "", "write a Markdown summary (for a pull-request comment) to this file (- for stdout)")
	jsonOut := fs.String("json", "", "write the result as JSON to this file (- for stdout)")
	out := fs.StringP("out", "o", "", "save A's and B's runs as DIR/a.json and DIR/b.json")
	strict := strictConditionsFlag(fs) // conditions.go
	quiet := fs.BoolP("quiet", "q", false, "print no progress")
	hf := &historyFlags{}
	hf.register(fs)
	var ci ciFlags // --objective (each side), --junit (objective.go)
	ci.register(fs, true)
	labelsA := fs.StringArray("label-a", nil, "label A's run key=value in the history (repeatable; --label labels both)")
	labelsB := fs.StringArray("label-b", nil, "label B's run key=value in the history (repeatable)")
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
	var errs []error
	scA, lcfg, expected, err := lf.build(fs, pos[0])
	errs = append(errs, err)
	scB, _, _, err := lf.build(fs, pos[1])
	errs = append(errs, err)
	plan, err := abPlan(lcfg, *levels, *rates, warmup, *pairs)
	errs = append(errs, err, cfg.Validate())
	cpu := *pidA != 0 || *pidB != 0
	if cpu {
		errs = append(errs, checkPids(*pidA, *pidB))
	}
	if *maxPairs == 0 {
		*maxPairs = compare.DefaultLooks * *pairs
	}
	if *maxPairs < *pairs || *maxPairs > 1000 {
		errs = append(errs, fmt.Errorf("--max-pairs %d: want --count (%d) to 1000", *maxPairs, *pairs))
	}
	seq, checks, looks, need := compare.ABSequence(cfg, plan.Len(), cpu, *pairs, *maxPairs)
	if err == nil && *pairs < need {
		errs = append(errs, fmt.Errorf("--count %d: %d pairs cannot show a significant change at alpha %g over %d checks x %d looks; use --count %d or more (10 is a good start)",
			*pairs, *pairs, cfg.Alpha, checks, looks, need))
	}
	labels := map[string]map[string]string{}
	for side, extra := range map[string][]string{sweep.SideA: *labelsA, sweep.SideB: *labelsB} {
		l, err := parseLabels(append(slices.Clone(hf.labels), extra...))
		errs = append(errs, err)
		labels[side] = l
	}
	if err := errors.Join(errs...); err != nil {
		return asUsage(fmt.Errorf("ab: %w", err))
	}
	if err := ci.check(); err != nil {
		return err
	}
	if err := hf.check(); err != nil {
		return err
	}
	if err := checkFiles(*mdOut, *jsonOut); err != nil {
		return err
	}
	if *out != "" {
		if err := checkRunDir(filepath.Dir(*out), filepath.Base(*out)); err != nil {
			return err
		}
	}
	if err := checkFileLimit(plan.MaxConnections(lcfg)); err != nil {
		return err
	}
	srcA, err := sf.build(ctx, scA, extra)
	if err != nil {
		return asUsage(err)
	}
	srcB, err := sf.build(ctx, scB, extra)
	if err != nil {
		return asUsage(err)
	}
	tgtA, _ := scenario.ParseTarget(srcA.scenario.URL)
	tgtB, _ := scenario.ParseTarget(srcB.scenario.URL)
	docA, docB := newRun(result.KindRun, srcA.scenario, lcfg, args), newRun(result.KindRun, srcB.scenario, lcfg, args)
	docA.Name, docB.Name = "A", "B"
	id := strconv.FormatInt(docA.Start.UnixNano(), 10)
	for side, d := range map[string]*result.Run{sweep.SideA: docA, sweep.SideB: docB} {
		d.Command[1] = "ab"
		d.Labels = labels[side]
		d.Labels[abLabel], d.Labels[abSideLabel] = id, side
	}
	if !*quiet {
		fmt.Fprintf(e.stderr, "apiperf: ab A=%s B=%s at %s: pairs in ABBA order, %s measured per step on %d threads\n",
			docA.Scenario.URL, docB.Scenario.URL, plan, perLevel(lcfg), lcfg.Threads)
	}
	opts := []load.Option{load.WithExpected(expected)}
	step := func(src *source, tgt scenario.Target, pid int) sweep.StepFunc {
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
	progress := func(s sweep.ABStep) {
		if !*quiet {
			cpu := ""
			if s.Step.TargetCPU > 0 && s.Step.Requests > 0 {
				cpu = fmt.Sprintf(", target CPU %.1f µs/request", float64(s.Step.TargetCPU.Duration().Microseconds())/float64(s.Step.Requests))
			}
			fmt.Fprintf(e.stderr, "apiperf: %s pair %d (of up to %d) %s: %.1f req/s, p99 %.3f ms%s\n", s.Step.Label, s.Pair+1, s.Pairs, s.Side,
				s.Step.QPS(), sample.Median(compare.GateSamples(compare.MetricP99, []*measure.Step{s.Step})), cpu)
		}
	}
	condA := startConditions(ctx, lcfg, tgtA, &targetFlags{pid: *pidA}, lf.redact) // conditions.go
	condB := startConditions(ctx, lcfg, tgtB, &targetFlags{pid: *pidB}, lf.redact)
	run, err := sweep.RunAB(ctx, plan, lcfg, sampled(condA, lcfg, step(srcA, tgtA, *pidA)), sampled(condB, lcfg, step(srcB, tgtB, *pidB)), seq, progress)
	if run == nil {
		return err
	}
	if err != nil {
		return fmt.Errorf("ab: %w", err)
	}
	for _, steps := range [][]*measure.Step{run.A, run.B} {
		if err := checkOutcome(e, steps); err != nil {
			return err // a side where nothing succeeded cannot be compared
		}
	}
	docA.Steps, docB.Steps = run.A, run.B
	docA.Conditions, docB.Conditions = condA.Record(), condB.Record()
	for side, d := range map[string]*result.Run{sweep.SideA: docA, sweep.SideB: docB} {
		d.AB = &sweep.ABRecord{ID: id, Side: side, Every: *pairs, Max: *maxPairs, Looks: looks, Pairs: run.Pairs, Order: run.Order}
	}
	objective := errors.Join(ci.judge(e, docA), ci.judge(e, docB)) // each side against --objective
	for _, d := range []*result.Run{docA, docB} {
		if err := hf.record(ctx, e, d); err != nil {
			return err
		}
	}
	docA.End, docB.End = time.Now().UTC(), time.Now().UTC()
	if *out != "" {
		if err := os.MkdirAll(*out, 0o755); err != nil {
			return fmt.Errorf("ab: %w", err)
		}
		for name, d := range map[string]*result.Run{"a.json": docA, "b.json": docB} {
			if err := d.Save(filepath.Join(*out, name)); err != nil {
				return err
			}
		}
	}
	res, err := compare.AB(docA, docB, cfg)
	if err != nil {
		return fmt.Errorf("ab: %w", err)
	}
	res.A, res.B = docA.Scenario.URL, docB.Scenario.URL
	res.SetConditions(compare.CheckConditions(docA, docB, "A", "B"))
	if ctx.Err() != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("interrupted: compared the %d pair(s) measured", len(run.B)))
	}
	res.StrictConditions = *strict
	err = abReport(e, res, *mdOut, *jsonOut, ctx.Err() != nil)
	for _, d := range []*result.Run{docA, docB} {
		if rerr := report.ObjectiveLines(e.stderr, d); rerr != nil {
			return rerr
		}
	}
	reports := errors.Join(ci.finish(e, "ab", res.A+" vs "+res.B, docA.Start, []*result.Run{docA, docB}, report.CheckCases("ab", res.Lines())),
		summarize(res.Markdown))
	return ciOutcome(err, reports, objective)
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
	toStdout := false
	if mdOut != "" {
		toStdout = toStdout || mdOut == "-"
		if err := writeOut(e, mdOut, res.Markdown); err != nil {
			return err
		}
	}
	if jsonOut != "" {
		toStdout = toStdout || jsonOut == "-"
		b, err := res.JSON()
		if err != nil {
			return err
		}
		if err := writeOut(e, jsonOut, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
			return err
		}
	}
	if toStdout {
		res.Text(e.stderr)
	} else {
		res.Text(e.stdout)
	}
	if o := res.Outcome(); o == compare.OutcomeFail || !interrupted {
		return outcomeErr(o, res.Conditions)
	}
	return fmt.Errorf("interrupted: %w", errFailed)
}
