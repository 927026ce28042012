package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/apiperf/apiperf/conditions"
	"github.com/apiperf/apiperf/result"
)

// SummaryOptions say what a run document's terminal summary shows beyond the default.
type SummaryOptions struct {
	TextOptions // a run's: the latency distributions (--latency, -U)
	// TopN is how many rows of the target's profiles to show (0: the default); ProfileDir
	// is where they were saved, named in the summary.
	TopN       int
	ProfileDir string
}

// Summary writes the terminal summary of a finished run document, the one of run, sweep,
// capacity and merge: for a run, wrk's summary of its last step, what was off in its
// conditions, its repetitions, the workers, the target's capture and the objectives; for a
// sweep or a capacity search, its table, the conditions, the workers, the objectives, the
// target's capture and the verdict.
func Summary(w io.Writer, doc *result.Run, o SummaryOptions) error {
	if doc.Sweep != nil || doc.Capacity != nil {
		return levelsSummary(w, doc, o)
	}
	if len(doc.Steps) == 0 {
		return nil
	}
	if err := Text(w, doc, doc.Steps[len(doc.Steps)-1], o.TextOptions); err != nil {
		return err
	}
	ConditionsLine(w, doc.Conditions, "  ")
	if err := Repetitions(w, doc); err != nil {
		return err
	}
	if err := workersAndTarget(w, doc, o, false); err != nil {
		return err
	}
	return ObjectiveLines(w, doc)
}

// levelsSummary is Summary of a document with levels: a sweep's or a capacity search's.
func levelsSummary(w io.Writer, doc *result.Run, o SummaryOptions) error {
	table := SweepTable
	if doc.Capacity != nil {
		table = CapacityTable
	}
	if err := table(w, doc); err != nil {
		return err
	}
	ConditionsLine(w, doc.Conditions, "")
	if err := workersAndTarget(w, doc, o, true); err != nil {
		return err
	}
	return WriteVerdict(w, doc.Verdict)
}

// workersAndTarget writes the workers' table and the target's capture, with the objectives
// between them when objectivesFirst (a sweep's order).
func workersAndTarget(w io.Writer, doc *result.Run, o SummaryOptions, objectivesFirst bool) error {
	if doc.Cluster != nil {
		if err := Workers(w, doc.Cluster); err != nil {
			return err
		}
	}
	if objectivesFirst {
		if err := ObjectiveLines(w, doc); err != nil {
			return err
		}
	}
	if doc.Target == nil {
		return nil
	}
	return TargetText(w, doc.Target, o.TopN, o.ProfileDir)
}

// ConditionsLine writes one line when the run's conditions are off (a busy machine,
// powersave, a cgroup quota below apiperf's cores, a -race target), nothing otherwise, so
// the text on a quiet machine is unchanged.
func ConditionsLine(w io.Writer, rec *conditions.Record, indent string) {
	if off := rec.Off(conditions.DefaultThresholds); len(off) > 0 {
		fmt.Fprintf(w, "%sConditions: %s\n", indent, strings.Join(off, "; "))
	}
}
