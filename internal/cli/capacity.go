package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/report"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/sweep"
)

// capacityFlags are capacity's own flags: the search and where it writes.
type capacityFlags struct {
	search         sweep.Search
	slo, dir, name *string
	precision      *float64
	warmup         time.Duration
	quiet          *bool
}

func (f *capacityFlags) register(fs *pflag.FlagSet) {
	f.search = sweep.Search{}.WithDefaults()
	f.slo = fs.String("slo", sweep.DefaultObjective, "objective the answer must meet (p50/p90/p99/p99.9<=D, success>=P%, errors<=P%); a probe must also keep up with its rate")
	fs.Var(rateValue{&f.search.Start}, "start", "rate of the first probe, req/s")
	fs.Var(rateValue{&f.search.Max}, "max-rate", "never probe above this rate (0: no limit)")
	fs.Float64Var(&f.search.Factor, "factor", f.search.Factor, "growth factor between probes until one fails")
	f.precision = fs.Float64("precision", f.search.Precision*100, "stop when the answer is known to within this many percent")
	fs.IntVar(&f.search.MaxProbes, "max-probes", f.search.MaxProbes, "give up after this many rates decided (a failing rate is probed twice)")
	f.warmup = sweep.DefaultProbeWarmup
	fs.Var(durationValue{&f.warmup}, "warmup", "unmeasured load before each probe")
	f.dir = fs.String("dir", DefaultSweepDir, "directory of run directories")
	f.name = fs.String("name", "", "run directory and file name (default: the target's host-port-capacity)")
	f.quiet = fs.BoolP("quiet", "q", false, "print nothing on stderr but warnings and errors")
	fs.MarkHidden("rate") // the search chooses the rates (refused below, with what to use instead)
}

// check reads the search and the objective from the flags; the problems are reported with
// the load's.
func (f *capacityFlags) check(fs *pflag.FlagSet) (sweep.Objective, []error) {
	var errs []error
	if fs.Changed("rate") {
		errs = append(errs, errors.New("capacity: the search chooses the rates; use --start and --max-rate"))
	}
	f.search.Precision = *f.precision / 100
	errs = append(errs, f.search.Validate())
	obj, err := sweep.ParseObjective(*f.slo)
	if err == nil {
		err = requireObjective(*f.slo)
	}
	if err != nil {
		errs = append(errs, fmt.Errorf("--slo: %w", err))
	}
	return obj, errs
}

func cmdCapacity(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet("capacity", e)
	c := newLoadCmd(fs, e, true, false)        // the objective is --slo
	c.lf.duration = sweep.DefaultProbeDuration // what -d says in --help too
	if d := fs.Lookup("duration"); d != nil {
		d.DefValue, d.Usage = sweep.DefaultProbeDuration.String(), "duration of each probe, e.g. 5s, 30s (a bare number is seconds)"
	}
	var f capacityFlags
	f.register(fs)
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
		c.lf.duration = sweep.DefaultProbeDuration
	}
	obj, errs := f.check(fs)
	c.lf.rate = f.search.Start // so the config validates as open loop
	sc, cfg, expected, err := c.check(fs, pos[0], errs...)
	if err != nil || e.checkOnly {
		return err
	}
	s, err := c.prepare(ctx, e, sc, cfg, cfg.Conns(), expected, extra, *f.quiet)
	if err != nil {
		return err
	}
	tgt := s.tgt
	if *f.name, err = runDirName(e, *f.dir, *f.name, report.SafeName(tgt.Host+"-"+tgt.Port+"-capacity"), c.hf); err != nil {
		return err
	}
	runDir := filepath.Join(*f.dir, *f.name)
	doc := newRun(result.KindCapacity, s.src.scenario, cfg, args)
	doc.Name = *f.name
	if !*f.quiet {
		fmt.Fprintf(e.stderr, "apiperf: capacity of %s%s: probes of %v (warmup %v) %s; objective %s; writing %s\n",
			doc.Scenario.Redact(), cfg.Over(), cfg.Duration, f.warmup, f.search, obj, runDir)
	}
	// as sweep does: the target's process from its port; one <rate>.hlog per probed rate
	if err := s.begin(ctx, doc, cfg, filepath.Join(runDir, "hlog"), true); err != nil {
		return err
	}
	defer s.close()
	return f.run(ctx, s, cfg, obj, runDir)
}

// run searches for the capacity in the session, then writes and prints what it found.
func (f *capacityFlags) run(ctx context.Context, s *loadSession, cfg load.Config, obj sweep.Objective, runDir string) error {
	e, doc := s.e, s.doc
	eng := newEngine(e, *f.quiet, s.src, s.tgt, s.expected)
	eng.watch = s.watch
	runPath := filepath.Join(runDir, "run.json")
	r := sweep.CapacityRunner{Search: f.search, Objective: obj, Base: cfg, Warmup: f.warmup, Step: s.step(eng.step), Hook: s.hooks(eng.progress),
		Save: func(steps []*measure.Step, c *sweep.Capacity) error {
			doc.Steps, doc.Capacity, doc.End, doc.Conditions = steps, c, time.Now().UTC(), s.record()
			if !*f.quiet {
				p := c.Probes[len(c.Probes)-1]
				fmt.Fprintf(e.stderr, "apiperf: probe %d: %s %s: %s\n", len(c.Probes), sweep.Label(true, p.Rate), p.Verdict, p.Reason)
			}
			return doc.Save(runPath)
		}}
	c, steps, probeErr := r.Run(ctx)
	doc.Capacity = c
	s.end(ctx, steps)
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
	s.finishCapture(runDir)
	err := finishSweep(ctx, e, doc, runDir, false, s.c.hf, &s.c.ci, s.capture.TopN)
	s.serve(ctx, runDir) // --serve-results: the finished directory, then the outcome
	switch {
	case err != nil:
		return err
	case probeErr != nil:
		return fmt.Errorf("capacity: %w", probeErr)
	}
	var failed error
	if c.Answer == 0 {
		failed = fmt.Errorf("capacity: %w", errFailed)
	}
	return s.outcome(ctx, "capacity search", failed, nil)
}
