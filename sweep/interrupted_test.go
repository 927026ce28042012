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
