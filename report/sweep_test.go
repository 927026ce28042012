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

// TestCapacityTable checks the probe table and the answer line against a golden file: a
// noisy first probe confirmed as a pass, a failure confirmed, an interrupted probe.
func TestCapacityTable(t *testing.T) {
	obj, _ := sweep.ParseObjective(sweep.DefaultObjective)
	ms := func(n float64) measure.Duration { return measure.Duration(n * float64(time.Millisecond)) }
	c := &sweep.Capacity{Search: sweep.Search{Start: 100}.WithDefaults(), Objective: obj, Answer: 187.5, Limit: 200, Interrupted: true,
		Probes: []sweep.Probe{
			{Rate: 100, Sent: 500, Due: 500, Verdict: sweep.VerdictFailed, Reason: "p99 812ms > 500ms", P99: ms(812), Success: 100},
			{Rate: 100, Sent: 500, Due: 500, Verdict: sweep.VerdictMet, Reason: "p99 12ms, success 100%: meets (the first probe's failure was not confirmed)", Confirms: true, P99: ms(12), Success: 100},
			{Rate: 200, Sent: 700, Due: 1000, Verdict: sweep.VerdictFailed, Reason: "sent 700 of 1000 requests due", P99: ms(40), Success: 100},
			{Rate: 200, Sent: 690, Due: 1000, Verdict: sweep.VerdictFailed, Reason: "sent 690 of 1000 requests due (confirmed)", Confirms: true, P99: ms(41), Success: 100},
			{Rate: 187.5, Sent: 937, Due: 937, Verdict: sweep.VerdictMet, Reason: "meets", P99: ms(20), Success: 100},
			{Rate: 194, Sent: 300, Due: 300, Verdict: sweep.VerdictInterrupted, Reason: "interrupted during the probe: neither pass nor fail", P99: ms(20), Success: 100},
		}}
	var b bytes.Buffer
	CapacityTable(&b, &result.Run{Capacity: c})
	golden.Check(t, "capacity_table.golden", b.Bytes())
}
