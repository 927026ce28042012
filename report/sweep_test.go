package report

import (
	"bytes"
	"testing"
	"time"

	"github.com/apiperf/apiperf/internal/golden"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/sweep"
)

// TestSweepTable checks the table and headlines printed after a sweep against a golden file.
func TestSweepTable(t *testing.T) {
	mk := func(label string, n, failed int64, lat time.Duration) *measure.Step {
		h := measure.NewHistogram()
		h.RecordN(lat, n-failed)
		h.RecordN(3*lat, failed)
		return &measure.Step{Label: label, Elapsed: measure.Duration(time.Second), Attempts: n, Requests: n - failed/2,
			Successes: n - failed, Errors: measure.Errors{Timeout: failed / 2, Status: failed - failed/2}, Latency: h}
	}
	obj, _ := sweep.ParseObjective(sweep.DefaultObjective)
	r := &result.Run{Kind: result.KindSweep, Sweep: sweep.NewRecord(sweep.Plan{Levels: []int{200, 500, 1000}}, obj, sweep.DefaultRules)}
	r.Steps = []*measure.Step{mk("c=200", 12000, 0, 4*time.Millisecond), mk("c=500", 20000, 4, 90*time.Millisecond), mk("c=1000", 15000, 600, 400*time.Millisecond)}
	r.Sweep.Analyze(r.Steps)
	r.Sweep.VsNative = &sweep.Comparison{Ratio: 0.137, Label: "c=500", QPS: 19998, NativeLabel: "c=500", NativeQPS: 145970}
	r.Sweep.Stop = &sweep.Stop{Rule: sweep.RuleDecline, After: "c=1000", Reason: "QPS stayed below the best"}
	var b bytes.Buffer
	SweepTable(&b, r)
	golden.Check(t, "sweep_table.golden", b.Bytes())
}
