package cli

import (
	"fmt"
	"io"
	"os"
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

// judge judges the objective at every level of doc (kept in run.json) and writes its lines;
// errFailed when a term failed.
func (f *ciFlags) judge(e *env, doc *result.Run) error {
	failed := doc.CheckObjective(f.obj)
	if err := report.ObjectiveLines(e.stdout, doc); err != nil {
		return err
	}
	if len(failed) > 0 {
		return fmt.Errorf("objective not met: %s at %s: %s: %w", failed[0].Term, failed[0].Level, failed[0].Reason, errFailed)
	}
	return nil
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
