package sweep

import (
	"github.com/apiperf/apiperf/measure"
	"strings"
	"testing"
	"time"
)

// Finding 7 of issue 12: a level cut short by Ctrl-C is marked interrupted and is never the
// peak, the knee or the limit, however high its (short-window) QPS.
func TestInterruptedLevelIsNeitherPeakNorKnee(t *testing.T) {
	cut := fakeStep("c=40", 0, 3000, 0, time.Millisecond) // the highest QPS, but cut short
	cut.Interrupted = true
	steps := []*measure.Step{fakeStep("c=10", 0, 1000, 0, time.Millisecond), fakeStep("c=20", 0, 2000, 0, time.Millisecond), cut}
	lv := Levels(steps)
	if !lv[2].Interrupted || lv[0].Interrupted {
		t.Fatalf("Levels: interrupted flags %v %v %v; want only c=40", lv[0].Interrupted, lv[1].Interrupted, lv[2].Interrupted)
	}
	o, err := ParseObjective("p99<=100ms")
	if err != nil {
		t.Fatal(err)
	}
	a := Analyze(lv, o)
	if a.Peak != 1 || a.Knee != 1 || a.Limit != 1 {
		t.Errorf("Analyze: peak %d, knee %d, limit %d; want c=20 (1) for all three", a.Peak, a.Knee, a.Limit)
	}
	if w := strings.Join(a.Warnings, "\n"); !strings.Contains(w, "c=40 was interrupted") {
		t.Errorf("warnings %q; want c=40 named as interrupted", w)
	}
}

// Finding 4 of issue 12: a probe where nothing succeeded never meets an objective, even one
// that says nothing about success (a dead target answered nothing, fast).
func TestJudgeNothingSucceeded(t *testing.T) {
	dead := fakeStep("rate=100/s", 0, 100, 0, 0)
	dead.Requests, dead.Successes, dead.Errors = 0, 0, measure.Errors{Connect: 100}
	dead.Latency = measure.NewHistogram()
	l := Reduce("rate=100/s", 100, true, []*measure.Step{dead}, []int{0})
	o, _ := ParseObjective("p99<=1s")
	if met, why := Judge(l, 100, o); met || !strings.Contains(why, "no request succeeded") {
		t.Errorf("Judge of a probe with no success under p99<=1s = %v, %q; want a failure saying why", met, why)
	}
}
