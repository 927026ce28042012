package result

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
)

// TestDecodeV1Sweep proves a version 1 run.json (plan fields inline, median points) reads as
// a version 2 record with its levels recomputed from the steps, native run included.
func TestDecodeV1Sweep(t *testing.T) {
	h := measure.NewHistogram()
	h.RecordN(5*time.Millisecond, 1000)
	step, err := json.Marshal(&measure.Step{Label: "c=10", Concurrency: 10, Elapsed: measure.Duration(time.Second),
		Attempts: 1000, Requests: 1000, Successes: 1000, Latency: h})
	if err != nil {
		t.Fatal(err)
	}
	sw := `{"levels": [10, 50], "warmup": "1s", "count": 1, "objective": "p99<=20ms", "rules": {"min_success": 50},
		"points": [{"label": "c=10", "level": 10, "qps": 1000}], "peak": 0, "knee": 0,
		"stop": {"rule": "decline", "after": "c=10", "reason": "QPS fell"}}`
	doc := fmt.Sprintf(`{"version": 1, "kind": "sweep", "steps": [%s], "sweep": %s,
		"native": {"version": 1, "kind": "sweep", "steps": [%s], "sweep": %s}}`, step, sw, step, sw)
	r, err := Decode("old.json", []byte(doc))
	if err != nil {
		t.Fatalf("Decode(version 1 sweep) = %v", err)
	}
	s := r.Sweep
	if s == nil || len(s.Plan.Levels) != 2 || s.Plan.Warmup != measure.Duration(time.Second) || s.Objective.String() != "p99<=20ms" ||
		s.Rules.MinSuccess != 50 || s.Stop == nil || s.Stop.Rule != "decline" {
		t.Fatalf("upgraded sweep = %+v; want the plan, objective, rules and stop of the v1 document", s)
	}
	if len(s.Levels) != 1 || s.Levels[0].QPS != 1000 || s.Peak != 0 || s.Knee != 0 || s.Limit != 0 {
		t.Errorf("upgraded levels = %+v peak %d knee %d; want c=10 at 1000 req/s, peak and knee 0", s.Levels, s.Peak, s.Knee)
	}
	if r.Native == nil || r.Native.Sweep == nil || len(r.Native.Sweep.Levels) != 1 {
		t.Errorf("native run = %+v; want it upgraded too", r.Native)
	}
	capDoc := fmt.Sprintf(`{"version": 1, "kind": "capacity", "steps": [%s], "sweep": {"rates": [100], "objective": "p99<=20ms"},
		"capacity": {"search": {"start": 100}, "probes": [{"rate": 100, "met": false, "misses": ["p99 30ms > 20ms"], "step": 0}], "answer": 0}}`, step)
	c, err := Decode("cap.json", []byte(capDoc))
	if err != nil || c.Capacity == nil || len(c.Capacity.Probes) != 1 || c.Capacity.Probes[0].Verdict != "failed" || c.Capacity.Probes[0].Reason != "p99 30ms > 20ms" {
		t.Errorf("Decode(version 1 capacity) = %+v, %v; want the probe failed with its reason", c, err)
	}
	if _, err := Decode("bad.json", []byte(`{"version": 1, "sweep": {"levels": "x"}}`)); err == nil {
		t.Error("Decode of a malformed version 1 sweep succeeded; want an error")
	}
}
