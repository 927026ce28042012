package result

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/sweep"
)

func sweepStep(label string, n int64, lat time.Duration) *measure.Step {
	h := measure.NewHistogram()
	h.RecordN(lat, n)
	return &measure.Step{Label: label, Elapsed: measure.Duration(time.Second), Attempts: n, Requests: n, Successes: n,
		Latency: h, AllAttempts: h.Clone()}
}

func TestSweepRoundTrip(t *testing.T) {
	obj, err := sweep.ParseObjective("p99<=20ms,success>=99%")
	if err != nil {
		t.Fatal(err)
	}
	plan := sweep.Plan{Levels: []int{10, 50, 100}, Warmup: measure.Duration(200 * time.Millisecond), Count: 1}
	r := &Run{Version: Version, Kind: KindSweep, Sweep: NewSweep(plan, obj, sweep.DefaultRules)}
	r.Steps = []*measure.Step{sweepStep("c=10", 1000, 5*time.Millisecond), sweepStep("c=50", 3000, 15*time.Millisecond), sweepStep("c=100", 2000, 40*time.Millisecond)}
	if w := r.Sweep.Analyze(r.Steps); len(w) != 0 {
		t.Errorf("Analyze warnings = %q; want none", w)
	}
	r.Sweep.Stop = &sweep.Stop{Rule: sweep.RuleDecline, After: "c=100", Reason: "QPS fell"}
	r.Sweep.VsNative = &sweep.Comparison{Ratio: 0.25, Label: "c=50", QPS: 3000, NativeLabel: "c=50", NativeQPS: 12000}
	b, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode("run.json", b)
	if err != nil {
		t.Fatalf("Decode(Encode(run)) = %v", err)
	}
	s := back.Sweep
	if s == nil || !reflect.DeepEqual(s.Plan(), plan) || s.Objective.String() != obj.String() || s.Rules != sweep.DefaultRules ||
		!reflect.DeepEqual(s.Points, r.Sweep.Points) || !reflect.DeepEqual(s.Stop, r.Sweep.Stop) || !reflect.DeepEqual(s.VsNative, r.Sweep.VsNative) {
		t.Fatalf("sweep after a JSON round trip = %+v; want %+v", s, r.Sweep)
	}
	if s.PeakPoint() == nil || s.PeakPoint().Label != "c=50" || s.KneePoint() == nil || s.KneePoint().Label != "c=50" {
		t.Errorf("peak %+v knee %+v; want both at c=50 (c=100 misses p99<=20ms)", s.PeakPoint(), s.KneePoint())
	}
	want := []string{
		"peak: c=50, 3000 req/s (p99 15ms, success 100%)",
		"knee: c=50, the largest level meeting p99<=20ms,success>=99% (3000 req/s, p99 15ms)",
		"peak QPS is 25% of plain net/http at c=50 (3000 vs 12000 req/s)",
	}
	if got := s.Headlines(); !reflect.DeepEqual(got, want) {
		t.Errorf("Headlines() = %q\nwant %q", got, want)
	}
}

func TestSweepEmpty(t *testing.T) {
	s := NewSweep(sweep.Plan{Rates: []float64{100}}, sweep.Objective{}, sweep.Rules{})
	if s.PeakPoint() != nil || s.KneePoint() != nil || s.Peak != -1 || s.Knee != -1 {
		t.Errorf("new sweep: peak %d knee %d; want -1 and no points", s.Peak, s.Knee)
	}
	if h := s.Headlines(); len(h) != 2 || !strings.HasPrefix(h[0], "peak: none") || !strings.HasPrefix(h[1], "knee: none") {
		t.Errorf("Headlines() of an empty sweep = %q", h)
	}
	var nilSweep *Sweep
	if nilSweep.PeakPoint() != nil {
		t.Error("nil sweep has a peak point")
	}
	bad := []byte("{\n  \"version\": 1,\n  \"sweep\": {\"objective\": \"p99>=1s\"}\n}\n")
	if _, err := Decode("run.json", bad); err == nil || !strings.Contains(err.Error(), "run.json:") || !strings.Contains(err.Error(), "p99 takes <=") {
		t.Errorf("Decode with a bad objective = %v; want run.json:LINE: ... p99 takes <=", err)
	}
}
