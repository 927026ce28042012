package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/scenario"
	"github.com/apiperf/apiperf/sweep"
)

// Finding 7 of issue 12: an interrupted level is marked partial in the .dat (a comment
// line the classic readers skip), the table and report.html, and is not the peak.
func TestInterruptedLevelMarkedEverywhere(t *testing.T) {
	mk := func(label string, n int64) *measure.Step {
		h := measure.NewHistogram()
		h.RecordN(time.Millisecond, n)
		return &measure.Step{Label: label, Elapsed: measure.Duration(time.Second), Attempts: n, Requests: n, Successes: n, Latency: h, AllAttempts: measure.NewHistogram()}
	}
	obj, _ := sweep.ParseObjective(sweep.DefaultObjective)
	r := &result.Run{Kind: result.KindSweep, Scenario: scenario.Scenario{URL: "http://127.0.0.1:1/"}, Sweep: sweep.NewRecord(sweep.Plan{Levels: []int{10, 20}}, obj, sweep.DefaultRules)}
	cut := mk("c=20", 5000)
	cut.Interrupted = true
	r.Steps = []*measure.Step{mk("c=10", 1000), cut}
	r.Sweep.Analyze(r.Steps)
	var dat, table, page bytes.Buffer
	if err := WriteDat(&dat, r.Sweep.Levels); err != nil {
		t.Fatal(err)
	}
	SweepTable(&table, r)
	if err := HTML(&page, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(dat.String(), "# 20 interrupted: partial") {
		t.Errorf(".dat = %q; want a comment line marking 20 interrupted", dat.String())
	}
	if levels, err := ReadDat("x.dat", &dat); err != nil || len(levels) != 2 {
		t.Errorf("ReadDat of the .dat = %d levels, %v; want the 2 levels (the comment skipped)", len(levels), err)
	}
	row := ""
	for _, l := range strings.Split(table.String(), "\n") {
		if strings.HasPrefix(l, "c=20 ") {
			row = l
		}
	}
	if !strings.Contains(row, "interrupted (partial)") || strings.Contains(row, "peak") {
		t.Errorf("table row %q; want it marked interrupted and not the peak", row)
	}
	if !strings.Contains(page.String(), "interrupted (partial)") {
		t.Error("report.html does not mark the interrupted level")
	}
	if r.Sweep.Peak != 0 {
		t.Errorf("peak %d; want c=10 (0)", r.Sweep.Peak)
	}
}
