package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/report"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/scenario"
	"github.com/apiperf/apiperf/sweep"
)

func cmdCapacity(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet("capacity", e)
	lf, sf, hf := loadCommandFlags(fs, e)
	lf.duration = sweep.DefaultProbeDuration // what -d says in --help too
	if d := fs.Lookup("duration"); d != nil {
		d.DefValue, d.Usage = sweep.DefaultProbeDuration.String(), "duration of each probe, e.g. 5s, 30s (a bare number is seconds)"
	}
	search := sweep.Search{}.WithDefaults()
	slo := fs.String("slo", sweep.DefaultObjective, "objective the answer must meet (p50/p90/p99/p99.9<=D, success>=P%, errors<=P%); a probe must also keep up with its rate")
	fs.Var(rateValue{&search.Start}, "start", "rate of the first probe, req/s")
	fs.Var(rateValue{&search.Max}, "max-rate", "never probe above this rate (0: no limit)")
	fs.Float64Var(&search.Factor, "factor", search.Factor, "growth factor between probes until one fails")
	precision := fs.Float64("precision", search.Precision*100, "stop when the answer is known to within this many percent")
	fs.IntVar(&search.MaxProbes, "max-probes", search.MaxProbes, "give up after this many rates decided (a failing rate is probed twice)")
	warmup := sweep.DefaultProbeWarmup
	fs.Var(durationValue{&warmup}, "warmup", "unmeasured load before each probe")
	dir := fs.String("dir", DefaultSweepDir, "directory of run directories")
	name := fs.String("name", "", "run directory and file name (default: the target's host-port-capacity)")
	quiet := fs.BoolP("quiet", "q", false, "print nothing on stderr but warnings and errors")
	var lv liveFlags // --listen (live.go)
	lv.register(fs, false)
	var cf clusterFlags // --workers, --join-addr (worker.go)
	cf.register(fs)
	var tf targetFlags // --pprof, --metrics, --target-pid, --profile-levels (profile.go)
	tf.register(fs, true)
	var ci ciFlags // --junit (objective.go); the objective is --slo
	ci.register(fs, false)
	fs.MarkHidden("rate") // the search chooses the rates (refused below, with what to use instead)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: apiperf capacity [flags] URL\n\nFind the highest request rate that meets the objective: grow the rate until a rate fails\n(a failing probe is confirmed by a second one at the same rate), then bisect. Each probe is\nan open-loop run of -d after --warmup.\n\n%s", fs.FlagUsages()+exitCodes)
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	pos, extra := splitDash(fs)
	if len(pos) != 1 {
		return usagef("capacity: want one URL (usage: apiperf capacity [flags] URL)")
	}
	if !fs.Changed("duration") {
		lf.duration = sweep.DefaultProbeDuration
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
	if err := tf.validate(cfg.Duration.Duration()); err != nil {
		errs = append(errs, err)
	}
	if err := ci.check(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return asUsage(err)
	}
	if e.checkOnly {
		return nil
	}
	if err := checkFileLimit(cfg.Conns()); err != nil {
		return err
	}
	src, err := sf.build(ctx, sc, extra)
	if err != nil {
		return asUsage(err)
	}
	sc = src.scenario
	tgt, _ := scenario.ParseTarget(sc.URL)
	if err := planSources(ctx, e, cfg, tgt, *quiet); err != nil {
		return err
	}
	if *name, err = runDirName(e, *dir, *name, report.SafeName(tgt.Host+"-"+tgt.Port+"-capacity"), hf); err != nil {
		return err
	}
	runDir := filepath.Join(*dir, *name)
	doc := newRun(result.KindCapacity, sc, cfg, args)
	doc.Name = *name
	if err := hf.label(ctx, doc); err != nil {
		return err
	}
	if !*quiet {
		fmt.Fprintf(e.stderr, "apiperf: capacity of %s%s: probes of %v (warmup %v) %s; objective %s; writing %s\n",
			sc.Redact(), cfg.Over(), cfg.Duration, warmup, search, obj, runDir)
	}
	capture, note := tf.session(sc.URL, cf.workers == 0) // as sweep does: the target's process from its port
	if note != "" && !*quiet {
		fmt.Fprintf(e.stderr, "apiperf: %s\n", note)
	}
	// what the run is measured on (conditions.go), read before --listen serves it
	cond := startConditions(ctx, cfg, tgt, &tf, lf.redact)
	sess, err := startLoad(ctx, e, &lv, &cf, doc, *quiet, filepath.Join(runDir, "hlog"), src, expected, extra) // one <rate>.hlog per probed rate
	if err != nil {
		return err
	}
	defer sess.close()
	eng := newEngine(e, *quiet, src, tgt, expected)
	eng.watch = sess.watch
	runPath := filepath.Join(runDir, "run.json")
	r := sweep.CapacityRunner{Search: search, Objective: obj, Base: cfg, Warmup: warmup, Step: sess.step(eng.step), Hook: sweep.Hooks(eng.progress, captureHook(capture), localHook(sess.coord, conditionsHook(cond)), sess.hook()),
		Save: func(steps []*measure.Step, c *sweep.Capacity) error {
			doc.Steps, doc.Capacity, doc.End, doc.Conditions = steps, c, time.Now().UTC(), cond.Record()
			if !*quiet {
				p := c.Probes[len(c.Probes)-1]
				fmt.Fprintf(e.stderr, "apiperf: probe %d: %s %s: %s\n", len(c.Probes), sweep.Label(true, p.Rate), p.Verdict, p.Reason)
			}
			return doc.Save(runPath)
		}}
	c, steps, probeErr := r.Run(ctx)
	doc.Capacity, doc.Steps, doc.Conditions = c, steps, cond.Record()
	sess.finish(ctx, e, doc)
	if len(doc.Steps) == 0 {
		if probeErr != nil {
			return fmt.Errorf("capacity: %w", probeErr)
		}
		if c.GaveUp != "" {
			return fmt.Errorf("capacity: gave up at %s", c.GaveUp) // exit 1, like run
		}
		return errors.New("capacity: no probe ran")
	}
	doc.Sweep = sweep.NewRecord(sweep.Plan{Rates: c.Rates()}, obj, sweep.Rules{})
	doc.Sweep.Search = true
	finishCapture(e, doc, capture, runDir)
	showTarget := func() error {
		if doc.Target != nil {
			return report.TargetText(e.stdout, doc.Target, capture.TopN, runDir)
		}
		return nil
	}
	err = finishSweep(ctx, e, doc, runDir, false, hf, &ci, showTarget)
	sess.serveResults(ctx, e, runDir) // --serve-results: the finished directory, then the outcome
	if err != nil {
		return err
	}
	switch {
	case probeErr != nil:
		return fmt.Errorf("capacity: %w", probeErr)
	case ctx.Err() != nil:
		return fmt.Errorf("interrupted: %w", errFailed)
	case c.Answer == 0:
		return fmt.Errorf("capacity: %w", errFailed)
	case sess.partial(e, "capacity search"):
		return errFailed
	}
	return checkOutcome(e, doc.Steps)
}
