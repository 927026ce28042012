package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/apiperf/apiperf/cluster"
	"github.com/apiperf/apiperf/conditions"
	"github.com/apiperf/apiperf/live"
	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/profcap"
	"github.com/apiperf/apiperf/report"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/scenario"
	"github.com/apiperf/apiperf/sweep"
)

// loadCmd is what the load commands (run, sweep, capacity) share: the flags of what to
// send (load, source), where it is recorded (history), the target's capture (--pprof,
// --metrics, --target-pid), the live view, the scale-out and the objectives. A command adds
// its own flags, a runner and a printer; the session (below) does the rest in one order.
type loadCmd struct {
	lf *loadFlags
	sf *sourceFlags
	hf *historyFlags
	tf targetFlags  // profile.go
	lv liveFlags    // live.go
	cf clusterFlags // worker.go
	ci ciFlags      // objective.go
}

// newLoadCmd registers the shared flags on fs: levels says the command runs several steps
// (sweep, capacity: --profile-levels, no --hlog file of its own), objective that it takes
// --objective (capacity's is --slo).
func newLoadCmd(fs *pflag.FlagSet, e *env, levels, objective bool) *loadCmd {
	c := &loadCmd{}
	c.lf, c.sf, c.hf = loadCommandFlags(fs, e)
	c.tf.register(fs, levels)
	c.lv.register(fs, !levels)
	c.cf.register(fs)
	c.ci.register(fs, objective)
	return c
}

// check builds the scenario and the load config for url from the flags and checks every
// shared flag, reporting the command's own problems (errs) with them, all at once, as a
// usage error (exit 2).
func (c *loadCmd) check(fs *pflag.FlagSet, url string, errs ...error) (scenario.Scenario, load.Config, measure.StatusSet, error) {
	sc, cfg, expected, err := c.lf.build(fs, url)
	_, labels := parseLabels(c.hf.labels) // put in run.json by begin
	errs = append(errs, err, c.tf.validate(cfg.Duration.Duration()), c.ci.check(), labels)
	return sc, cfg, expected, asUsage(errors.Join(errs...))
}

// loadSession is one load command's sequence around its runner, in one order: the source
// built and the local addresses planned (prepare); the run's labels, the target's process
// found once and handed to the capture and the conditions, the live view (--listen,
// --hlog) and the scale-out coordinator (--workers), whose merged intervals the live view
// shows (begin); the steps' record and the live view closed (end), the capture finished,
// the finished results served, the outcome. A session-wide feature is added here.
type loadSession struct {
	c        *loadCmd
	tf       *targetFlags // c's, or a variant's own (its --variant-pid)
	e        *env
	quiet    bool
	src      *source
	tgt      scenario.Target
	expected measure.StatusSet
	extra    []string
	doc      *result.Run
	capture  *profcap.Session
	cond     *conditions.Session
	watch    *live.Session
	coord    *cluster.Coordinator // nil without --workers
}

// prepare checks that conns connections can be opened (0: the runner checks each step's),
// builds the request source (the script or mix, as saved in run.json) and plans the local
// addresses for the largest load, widest, before any traffic.
func (c *loadCmd) prepare(ctx context.Context, e *env, sc scenario.Scenario, widest load.Config, conns int,
	expected measure.StatusSet, extra []string, quiet bool) (*loadSession, error) {
	if conns > 0 {
		if err := checkFileLimit(conns); err != nil {
			return nil, err
		}
	}
	src, err := c.sf.build(ctx, sc, extra)
	if err != nil {
		return nil, asUsage(err)
	}
	tgt, err := scenario.ParseTarget(src.scenario.URL)
	if err != nil {
		return nil, asUsage(err)
	}
	if err := planLocalAddrs(ctx, e, widest, tgt, quiet); err != nil {
		return nil, err
	}
	return &loadSession{c: c, tf: &c.tf, e: e, quiet: quiet, src: src, tgt: tgt, expected: expected, extra: extra}, nil
}

// begin starts the session of doc before any traffic: its labels, the target's process
// (searched on loopback once: the capture samples it when find asks, as a sweep's verdict
// needs, and not scaled out, whose loopback is not this machine's), the conditions, then
// the live view (--hlog under hlogDir) and the workers. The caller defers close.
func (s *loadSession) begin(ctx context.Context, doc *result.Run, cfg load.Config, hlogDir string, find bool) error {
	s.doc = doc
	if err := s.c.hf.label(ctx, doc); err != nil {
		return err
	}
	proc := findProcess(s.tf, s.tgt)
	var note string
	s.capture, note = s.tf.session(proc, find && s.c.cf.workers == 0)
	if note != "" && !s.quiet {
		fmt.Fprintf(s.e.stderr, "apiperf: %s\n", note)
	}
	// what the run is measured on (conditions.go), read before --listen serves it
	s.cond = startConditions(ctx, cfg, s.tgt, s.tf, proc, s.c.lf.redact)
	watch, err := s.c.lv.start(s.e, doc, s.quiet, hlogDir)
	if err != nil {
		return err
	}
	coord, err := s.c.cf.coordinate(ctx, s.e, s.src, s.expected, s.extra)
	if err != nil {
		watch.Close(ctx)
		return err
	}
	if coord != nil {
		coord.WatchIntervals(watch.Feed())
	}
	s.watch, s.coord = watch, coord
	return nil
}

// step is the session's step function: the coordinator's when scaling out, else local.
func (s *loadSession) step(local sweep.StepFunc) sweep.StepFunc { return stepFunc(s.coord, local) }

// hooks are every measured step's hooks: the command's progress, the capture, the
// machine's conditions (on this machine only) and the workers' health (scaled out).
func (s *loadSession) hooks(progress sweep.Hook) sweep.Hook {
	var workers sweep.Hook
	if s.coord != nil {
		workers = s.coord.Hook
	}
	return sweep.Hooks(progress, captureHook(s.capture), localHook(s.coord, conditionsHook(s.cond)), workers)
}

// end keeps the steps and the conditions in the document, the workers' shares when scaled
// out, and closes the live view; a live view that does not close cleanly is a warning,
// never a failed run.
func (s *loadSession) end(ctx context.Context, steps []*measure.Step) {
	s.doc.Steps, s.doc.Conditions = steps, s.cond.Record()
	if s.coord != nil {
		s.doc.Cluster = s.coord.Record()
	}
	if err := s.watch.Close(ctx); err != nil {
		fmt.Fprintf(s.e.stderr, "apiperf: warning: %v\n", err)
	}
}

// record is the conditions' record so far, for a run.json saved after every step.
func (s *loadSession) record() *conditions.Record { return s.cond.Record() }

// finishCapture sets the document's target from the capture (profiles saved under dir).
func (s *loadSession) finishCapture(dir string) { finishCapture(s.e, s.doc, s.capture, dir) }

// serve serves the finished results to `apiperf k8s fetch` when --serve-results asks
// (scaled out only): dir, the run's directory (a run's --results-dir), or for a run without
// one ("") its run.json and the outputs rendered from it, in a directory made under TMPDIR
// for the while. Not
// fetched in time is a warning: the run's outcome stays its own.
func (s *loadSession) serve(ctx context.Context, dir string) {
	if s.coord == nil || s.c.cf.serve <= 0 {
		return
	}
	if dir == "" {
		tmp, err := os.MkdirTemp("", "apiperf-results-")
		if err == nil {
			defer os.RemoveAll(tmp)
			err = writeRunDir(tmp, s.doc)
		}
		if err != nil {
			fmt.Fprintf(s.e.stderr, "apiperf: warning: the results to serve: %v\n", err)
			return
		}
		dir = tmp
	}
	cf := &s.c.cf
	if err := cluster.ServeResults(ctx, cf.joinAddr, dir, cf.token, cf.serve, s.e.stderr); err != nil {
		fmt.Fprintf(s.e.stderr, "apiperf: warning: %v\n", err)
	}
}

// writeRunDir writes a run's directory: run.json and, when it has steps, everything
// rendered from it (report.html, charts, .dat, bench.txt, workers.txt).
func writeRunDir(dir string, doc *result.Run) error {
	if err := doc.Save(filepath.Join(dir, "run.json")); err != nil {
		return err
	}
	if len(doc.Steps) == 0 {
		return nil
	}
	_, err := report.WriteAll(dir, doc)
	return err
}

// close ends the coordinator and its workers' connections.
func (s *loadSession) close() {
	if s.coord != nil {
		s.coord.Close()
	}
}

// outcome is the command's exit after its output, in one order: interrupted; failed, the
// command's own failure (capacity: no rate met the objective); workers lost (named on
// stderr: "apiperf: partial sweep: ..."); else the steps' outcome with the objective's.
func (s *loadSession) outcome(ctx context.Context, what string, failed, objective error) error {
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("interrupted: %w", errFailed)
	case failed != nil:
		return failed
	case s.coord != nil && s.coord.Partial():
		fmt.Fprintf(s.e.stderr, "apiperf: partial %s: %s\n", what, strings.Join(s.coord.Lost(), "; "))
		return errFailed
	}
	return errors.Join(checkOutcome(s.e, s.doc.Steps), objective)
}
