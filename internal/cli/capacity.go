package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/report"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/scenario"
	"github.com/apiperf/apiperf/sweep"
)

// Capacity defaults that differ from `run`.
const (
	DefaultProbeDuration = 5 * time.Second
	DefaultProbeWarmup   = time.Second
	// minAchieved is the share of its target rate a probe must reach to pass: below it the
	// target (or the generator) could not keep up, whatever the latency says.
	minAchieved = 0.95
)

func cmdCapacity(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet("capacity", e)
	lf, sf, hf := loadCommandFlags(fs, e)
	lf.duration = DefaultProbeDuration // what -d says in --help too
	if d := fs.Lookup("duration"); d != nil {
		d.DefValue, d.Usage = DefaultProbeDuration.String(), "duration of each probe, e.g. 5s, 30s (a bare number is seconds)"
	}
	search := sweep.Search{}.WithDefaults()
	slo := fs.String("slo", "p99<=100ms,success>=99.9%", "objective the answer must meet (p50/p90/p99/p99.9<=D, success>=P%, errors<=P%)")
	fs.Var(rateValue{&search.Start}, "start", "rate of the first probe, req/s")
	fs.Var(rateValue{&search.Max}, "max-rate", "never probe above this rate (0: no limit)")
	fs.Float64Var(&search.Factor, "factor", search.Factor, "growth factor between probes until one fails")
	precision := fs.Float64("precision", search.Precision*100, "stop when the answer is known to within this many percent")
	fs.IntVar(&search.MaxProbes, "max-probes", search.MaxProbes, "give up after this many probes")
	warmup := DefaultProbeWarmup
	fs.Var(durationValue{&warmup}, "warmup", "unmeasured load before each probe")
	dir := fs.String("dir", DefaultSweepDir, "directory of run directories")
	name := fs.String("name", "", "run directory and file name (default: the target's host-port-capacity)")
	quiet := fs.BoolP("quiet", "q", false, "print nothing on stderr but warnings and errors")
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "Usage: apiperf capacity [flags] URL\n\nFind the highest request rate that meets the objective: grow the rate until a probe fails,\nthen bisect. Each probe is an open-loop run of -d.\n\n%s", fs.FlagUsages()+exitCodes)
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	pos, extra := splitDash(fs)
	if len(pos) != 1 {
		return usagef("capacity: want one URL (usage: apiperf capacity [flags] URL)")
	}
	if !fs.Changed("duration") {
		lf.duration = DefaultProbeDuration
	}
	var errs []error
	if fs.Changed("rate") {
		errs = append(errs, errors.New("capacity: the search chooses the rates; use --start and --max-rate"))
	}
	search.Precision = *precision / 100
	if err := search.Validate(); err != nil {
		errs = append(errs, err)
	}
	obj, err := sweep.ParseObjective(*slo)
	if err == nil {
		err = requireObjective(*slo)
	}
	if err != nil {
		errs = append(errs, fmt.Errorf("--slo: %w", err))
	}
	lf.rate = search.Start // so the config validates as open loop
	sc, cfg, expected, err := lf.build(fs, pos[0])
	if err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return asUsage(err)
	}
	if err := checkFileLimit(cfg.MaxConns()); err != nil {
		return err
	}
	src, err := sf.build(ctx, sc, extra)
	if err != nil {
		return asUsage(err)
	}
	sc = src.scenario
	tgt, _ := scenario.ParseTarget(sc.URL)
	if *name == "" {
		*name = report.SafeName(tgt.Host + "-" + tgt.Port + "-capacity")
	}
	runDir := filepath.Join(*dir, *name)
	if err := errors.Join(checkRunDir(*dir, *name), hf.check()); err != nil {
		return err
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(cfg.Threads))

	doc := newRun(result.KindCapacity, sc, cfg, args)
	doc.Name = *name
	doc.Capacity = &result.Capacity{Search: search}
	if err := hf.label(ctx, doc); err != nil {
		return err
	}
	if !*quiet {
		fmt.Fprintf(e.stderr, "apiperf: capacity of %s: probes of %v (warmup %v) %s; objective %s; writing %s\n",
			sc.Redact(), cfg.Duration, warmup, search, obj, runDir)
	}
	s := &sweeper{e: e, quiet: *quiet, cfg: cfg, src: src, target: tgt, expected: expected, dir: runDir, start: time.Now()}
	probeErr := s.probe(ctx, doc, search, obj, warmup)
	finishCapacity(doc, obj)
	if len(doc.Steps) == 0 {
		if probeErr != nil {
			return probeErr
		}
		return errors.New("capacity: no probe ran")
	}
	fmt.Fprintln(e.stdout, doc.Capacity.Headline(obj.String()))
	if err := s.finish(ctx, doc, hf); err != nil {
		return err
	}
	if probeErr != nil {
		return probeErr
	}
	if doc.Capacity.Answer == 0 {
		return fmt.Errorf("capacity: %w", errFailed)
	}
	return nil
}

// probe runs the search, one open-loop step per probe, saving run.json after each.
func (s *sweeper) probe(ctx context.Context, doc *result.Run, search sweep.Search, obj sweep.Objective, warmup time.Duration) error {
	c := doc.Capacity
	var probes []sweep.Probe
	for ctx.Err() == nil {
		rate, done := search.Next(probes)
		if done {
			break
		}
		label := sweep.Label(true, rate)
		cfg := s.cfg
		cfg.Rate = rate
		if warmup > 0 {
			w := cfg
			w.Duration, w.Requests = measure.Duration(warmup), 0
			if _, err := load.Run(ctx, w, s.src, s.target, s.options(w, len(probes), 0, label+" warmup")...); err != nil {
				return fmt.Errorf("capacity: warming up %s: %w", label, err)
			}
			s.clearLine()
		}
		step, err := load.Run(ctx, cfg, s.src, s.target, s.options(cfg, len(probes), 0, label)...)
		s.clearLine()
		if err != nil {
			return fmt.Errorf("capacity: %s: %w", label, err)
		}
		step.Label = label
		doc.Steps = append(doc.Steps, step)
		pt := sweep.Levels([]*measure.Step{step})[0]
		pr := result.CapacityProbe{Rate: rate, Achieved: pt.Achieved, Step: len(doc.Steps) - 1, Misses: obj.Misses(pt)}
		if pt.Achieved < minAchieved*rate {
			pr.Misses = append(pr.Misses, fmt.Sprintf("achieved %.1f req/s < %.0f%% of the target", pt.Achieved, minAchieved*100))
		}
		pr.Met = len(pr.Misses) == 0 && ctx.Err() == nil
		c.Probes = append(c.Probes, pr)
		probes = append(probes, sweep.Probe{Rate: rate, Met: pr.Met})
		if !s.quiet {
			verdict := "meets the objective"
			if !pr.Met {
				verdict = "fails: " + strings.Join(pr.Misses, ", ")
			}
			fmt.Fprintf(s.e.stderr, "apiperf: probe %d: %s achieved %.1f req/s, p99 %s: %s\n", len(probes), label, pt.Achieved, report.FormatDuration(pt.P99.Duration()), verdict)
		}
		doc.End = time.Now().UTC()
		if err := doc.Save(filepath.Join(s.dir, "run.json")); err != nil {
			return fmt.Errorf("capacity: %w", err)
		}
	}
	return nil
}

// finishCapacity sets the answer and gives the probes a sweep view (an ascending rate plan)
// so the sweep's table, charts and report show them.
func finishCapacity(doc *result.Run, obj sweep.Objective) {
	c := doc.Capacity
	var probes []sweep.Probe
	var rates []float64
	for _, p := range c.Probes {
		probes = append(probes, sweep.Probe{Rate: p.Rate, Met: p.Met})
		rates = append(rates, p.Rate)
	}
	pass, fail := sweep.Bracket(probes)
	c.Answer = pass
	if !math.IsInf(fail, 1) {
		c.Limit = fail
	}
	sort.Float64s(rates)
	if len(rates) == 0 {
		return
	}
	doc.Sweep = sweep.NewRecord(sweep.Plan{Rates: rates}, obj, sweep.Rules{})
}
