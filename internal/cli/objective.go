package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/apiperf/apiperf/report"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/sweep"
)

// stepSummaryEnv is where GitHub Actions reads a job's summary (Markdown appended to a file).
const stepSummaryEnv = "GITHUB_STEP_SUMMARY"

// ciFlags are what a CI job reads of a load command: --objective (run, sweep, ab) and
// --junit (those, capacity and gate).
type ciFlags struct {
	objective string
	junit     string
	obj       sweep.Objective
}

// register adds --junit, and --objective when the command takes one.
func (f *ciFlags) register(fs *pflag.FlagSet, objective bool) {
	if objective {
		fs.StringVar(&f.objective, "objective", "", "pass/fail terms every level must meet, e.g. 'p99<=300ms,success>=99.9%' (p50..p99.99, mean, max, success, errors, qps; NAME[endpoint] for one endpoint of a mix): exit 1 naming the failed term")
	}
	fs.StringVar(&f.junit, "junit", "", "write the checks (objective terms per level, gate checks) as JUnit XML to this file, for CI test reporters")
}

// check reads --objective and checks --junit's file before any traffic.
func (f *ciFlags) check() error {
	o, err := sweep.ParseObjective(f.objective)
	if err != nil {
		return usagef("--objective: %v", err)
	}
	f.obj = o
	return checkFiles(f.junit)
}

// judge judges the objective at every level of doc and keeps it there (run.json,
// report.html): call it before the run is saved. When a term failed it says which on
// stderr (whatever stdout holds: text or JSON) and returns the error the command ends with
// (exit 1).
func (f *ciFlags) judge(e *env, doc *result.Run) error {
	failed := doc.CheckObjective(f.obj)
	if len(failed) == 0 {
		return nil
	}
	at := ""
	if failed[0].Level != "" {
		at = " at " + failed[0].Level
	}
	more := ""
	if len(failed) > 1 {
		more = fmt.Sprintf(" (and %d more failed)", len(failed)-1)
	}
	fmt.Fprintf(e.stderr, "apiperf: objective not met: %s%s: %s%s\n", failed[0].Term, at, failed[0].Reason, more)
	return errFailed
}

// finish writes --junit: the objective's terms at every level of each run (run, sweep: one;
// ab: both sides), then checks (a gate's or an A/B comparison's).
func (f *ciFlags) finish(e *env, command, target string, start time.Time, runs []*result.Run, checks []report.JUnitCase) error {
	var cases []report.JUnitCase
	for _, r := range runs {
		name := command
		if r.AB != nil {
			name += "." + r.AB.Side
		}
		cases = append(cases, report.ObjectiveCases(name, r.Objectives)...)
	}
	return f.writeJUnit(e, "apiperf "+command+" "+target, start, append(cases, checks...))
}

// writeJUnit writes --junit with cases, the suite named for the command and its target.
func (f *ciFlags) writeJUnit(e *env, name string, start time.Time, cases []report.JUnitCase) error {
	if f.junit == "" {
		return nil
	}
	return writeOut(e, f.junit, func(w io.Writer) error {
		return report.JUnit(w, report.JUnitSuite{Name: name, Start: start, Duration: time.Since(start), Cases: cases})
	})
}

// appendStepSummary adds markdown to the GitHub Actions job summary when the job has one.
func appendStepSummary(markdown []byte) error {
	path := os.Getenv(stepSummaryEnv)
	if path == "" || len(markdown) == 0 {
		return nil
	}
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("%s: %w", stepSummaryEnv, err)
	}
	if _, err := file.Write(append(markdown, '\n')); err != nil {
		file.Close()
		return fmt.Errorf("%s: %w", stepSummaryEnv, err)
	}
	return file.Close()
}

// summarize appends a comparison's Markdown (the pull-request comment) to the GitHub job
// summary when the job has one.
func summarize(markdown func(io.Writer) error) error {
	if os.Getenv(stepSummaryEnv) == "" {
		return nil
	}
	var b strings.Builder
	if err := markdown(&b); err != nil {
		return err
	}
	return appendStepSummary([]byte(b.String()))
}

// ciOutcome is a command's end: its own outcome (a regression, inconclusive, not
// comparable, an error), unless writing the CI reports failed, joined with the objective's
// failure. Any other error of the command's own stands alone, so its message and exit code
// (2 for refused runs) are kept.
func ciOutcome(outcome, reports, objective error) error {
	switch {
	case reports != nil:
		return reports
	case outcome != nil && !errors.Is(outcome, errFailed) && !errors.Is(outcome, errInconclusive):
		return outcome
	}
	return errors.Join(outcome, objective)
}
