package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/apiperf/apiperf/compare"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/procfs"
	"github.com/apiperf/apiperf/profcap"
	"github.com/apiperf/apiperf/report"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/scenario"
	"github.com/apiperf/apiperf/sweep"
)

// targetFlags are --pprof, --metrics, --profile-levels and --trace-seconds: what to capture from the target
// while the load runs (run and sweep).
type targetFlags struct {
	pprof   string
	metrics string
	levels  []string
	topN    int
	pid     int // --target-pid: sample this process's CPU and RSS from /proc
	trace   float64
	// traceFlag is --trace-seconds, to tell a value given from the default.
	traceFlag *pflag.Flag
}

func (f *targetFlags) register(fs *pflag.FlagSet, sweep bool) {
	fs.StringVar(&f.pprof, "pprof", "", "capture the target's CPU, heap and goroutine profiles from its net/http/pprof `base` URL, e.g. http://127.0.0.1:6060/debug/pprof")
	fs.StringVar(&f.metrics, "metrics", "", "scrape the target's Prometheus text endpoint `URL` every second while the load runs")
	fs.IntVar(&f.topN, "profile-top", 20, "rows in the profile top tables")
	fs.Float64Var(&f.trace, "trace-seconds", profcap.DefaultTrace, "with --pprof, record the target's execution trace for `N` seconds after its CPU profile (0: none); see README for its cost")
	f.traceFlag = fs.Lookup("trace-seconds")
	fs.IntVar(&f.pid, "target-pid", 0, "sample the target process `PID`'s CPU and RSS from /proc every second (same machine; any language)")
	if sweep {
		f.levels = profcap.DefaultLevels
		fs.StringSliceVar(&f.levels, "profile-levels", profcap.DefaultLevels, "sweep levels whose profiles and traces are kept: peak, last, all, or levels like 50 or c=50 (they are captured at every level, so each sees the same overhead)")
	}
}

// validate checks the URLs and levels; window is the duration of one step (0: unbounded).
func (f *targetFlags) validate(window time.Duration) error {
	var errs []error
	for _, u := range []struct{ flag, v string }{{"--pprof", f.pprof}, {"--metrics", f.metrics}} {
		if u.v == "" {
			continue
		}
		p, err := url.Parse(u.v)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			errs = append(errs, fmt.Errorf("%s %q: want an http:// or https:// URL with a host", u.flag, u.v))
		}
	}
	if f.pprof != "" && window <= 0 {
		errs = append(errs, errors.New("--pprof needs a duration (-d) to place the CPU profile inside the load"))
	}
	if f.pid < 0 {
		errs = append(errs, fmt.Errorf("--target-pid %d: want a process id", f.pid))
	} else if f.pid > 0 {
		if _, err := procfs.Read(f.pid); err != nil {
			errs = append(errs, fmt.Errorf("--target-pid: %w", err))
		}
	}
	if f.trace < 0 || math.IsNaN(f.trace) || math.IsInf(f.trace, 0) {
		errs = append(errs, fmt.Errorf("--trace-seconds %v: want 0 (none) or more seconds", f.trace))
	} else if f.trace > 0 && f.pprof == "" && f.traceFlag != nil && f.traceFlag.Changed {
		errs = append(errs, errors.New("--trace-seconds needs --pprof: the trace is fetched from the target's net/http/pprof"))
	}
	if f.topN < 1 {
		errs = append(errs, fmt.Errorf("--profile-top %d: want at least 1", f.topN))
	}
	for _, l := range f.levels {
		if l != profcap.LevelsAll && l != profcap.LevelsPeak && l != profcap.LevelsLast && profcap.LevelNumber(l) < 0 {
			errs = append(errs, fmt.Errorf("--profile-levels %q: want peak, last, all, or a level like 50, c=50 or rate=100/s", l))
		}
	}
	return errors.Join(errs...)
}

// targetProcess is the target's process, looked for once per command and handed to the
// capture and the conditions: --target-pid, else the process listening on a loopback
// target's address; pid 0 with err when it was not found (errNotLoopback: not looked for).
type targetProcess struct {
	pid int
	how string // "--target-pid", "listening on 127.0.0.1:8080"
	err error
}

// findProcess finds the target's process (no /proc read for --target-pid or a target not
// on loopback).
func findProcess(f *targetFlags, t scenario.Target) targetProcess {
	if f.pid > 0 {
		return targetProcess{pid: f.pid, how: "--target-pid"}
	}
	pid, how, err := findTargetPIDOf(t)
	return targetProcess{pid: pid, how: how, err: err}
}

// session is the capture session the flags ask for against the target (it does nothing
// when none is). Without --target-pid and when asked to (a sweep, whose verdict needs it,
// without --workers, whose loopback is not this machine's), it samples the target's
// process p, its CPU and its wait for a CPU; note says what it found or why it found
// nothing ("" for a target inside apiperf's own process, as in tests).
func (f *targetFlags) session(p targetProcess, find bool) (s *profcap.Session, note string) {
	s = &profcap.Session{Pprof: f.pprof, Metrics: f.metrics, PID: f.pid, Levels: f.levels, TopN: f.topN, Machine: true,
		Trace: time.Duration(f.trace * float64(time.Second))}
	if f.pid > 0 {
		s.PIDSource = "--target-pid"
		return s, ""
	}
	if !find {
		return s, ""
	}
	switch {
	case errors.Is(p.err, errNotLoopback):
		s.PIDSource = "not looked for: " + p.err.Error()
		return s, ""
	case p.err != nil:
		s.PIDSource = "its process was not found: " + p.err.Error()
		return s, "target process not found, so its CPU is not measured (give --target-pid): " + p.err.Error()
	case p.pid == os.Getpid():
		return s, ""
	}
	s.PID, s.PIDSource = p.pid, p.how
	return s, fmt.Sprintf("target process %d (%s): sampling its CPU from /proc (--target-pid to choose another)", p.pid, p.how)
}

// errNotLoopback: a target not on loopback may be on another host; its process is not sought.
var errNotLoopback = procfs.ErrNotLoopback

// findTargetPIDOf finds the process listening on a loopback target's address: for
// "localhost", on 127.0.0.1 or ::1.
func findTargetPIDOf(t scenario.Target) (int, string, error) {
	return procfs.LoopbackListener(t.Host, t.Port)
}

// captureHook starts the session's capture of every measured step (warmups are not
// captured) and waits for it when the step ends.
func captureHook(s *profcap.Session) sweep.Hook {
	if !s.Enabled() {
		return nil
	}
	return func(ctx context.Context, i sweep.StepInfo) func(*measure.Step) {
		if i.Warmup {
			return nil
		}
		c := s.Begin(ctx, i.Label, i.Rep, i.Config.Duration.Duration())
		return func(*measure.Step) { c.Wait() }
	}
}

// finishCapture sets doc.Target from the session (profiles saved under dir) and reports
// its warnings on stderr; the caller renders the top tables.
func finishCapture(e *env, doc *result.Run, s *profcap.Session, dir string) {
	doc.SetTarget(s.Finish(doc.Steps, dir))
	if doc.Target == nil {
		return
	}
	for _, w := range doc.Target.AllWarnings() {
		fmt.Fprintf(e.stderr, "apiperf: warning: target: %s\n", w)
	}
}

// profileOutDir is where a run's profiles go: next to -o's file, else the working directory.
func profileOutDir(out string) string {
	if out == "" {
		return "."
	}
	return filepath.Dir(out)
}

// printProfileDiff prints, for two runs that both hold CPU profiles of the target, the
// functions whose share of CPU grew or shrank the most, and their execution trace summaries
// side by side. .dat files and runs without profiles print nothing.
func printProfileDiff(w io.Writer, pathA, pathB string) error {
	var runs [2]*result.Run
	for i, p := range []string{pathA, pathB} {
		if ok, err := isRunFile(p); err != nil || !ok {
			return nil
		}
		r, err := result.Load(p)
		if err != nil {
			return nil
		}
		runs[i] = r
	}
	if err := report.ProfileDiffText(w, compare.DiffProfiles(runs[0], runs[1], compare.DefaultProfileRows)); err != nil {
		return err
	}
	return report.TraceDiffText(w, compare.DiffTraces(runs[0], runs[1]))
}
