package profcap

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

func TestRecordRoundTrip(t *testing.T) {
	g := int64(12)
	cores := 1.5
	in := &Record{
		Pprof: "http://127.0.0.1:6060/debug/pprof", Metrics: "http://127.0.0.1:6060/metrics",
		ProfileLevels: []string{"peak", "last"},
		Steps: []StepRecord{
			{
				Label: "c=5", Start: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), CPUFrom: 400 * time.Millisecond, CPUSeconds: 1,
				Profiles: &Analysis{Goroutines: &g, CPU: &TopTable{SampleType: "cpu", Unit: "nanoseconds", Total: 10,
					ByCum: []TopEntry{{Function: "main.<f>", Flat: 1, FlatPct: 10, Cum: 10, CumPct: 100}}}},
				Files:  []string{"profiles/c=5/cpu.pb.gz"},
				Series: &Series{URL: "u", Interval: time.Second, Scrapes: 1, Points: []Point{{Offset: time.Second, CPUCores: &cores}}},
			},
			{Label: "c=50", Rep: 1, Warnings: []string{"captured 2 of 3 profiles: heap: 404 Not Found"}},
		},
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out Record
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("Unmarshal(%s): %v", b, err)
	}
	if !reflect.DeepEqual(in, &out) {
		t.Fatalf("round trip changed the capture:\n got %+v\nwant %+v", out, *in)
	}
	if s := out.Step("c=50", 1); s == nil || len(s.Warnings) != 1 {
		t.Errorf("Step(c=50, 1) = %+v, want the step with one warning", s)
	}
	if s := out.Step("c=50", 0); s != nil {
		t.Errorf("Step(c=50, 0) = %+v, want nil (no such repetition)", s)
	}
	if p := out.Profiled(); len(p) != 1 || p[0].Label != "c=5" {
		t.Errorf("Profiled() = %v, want only c=5", p)
	}
	if w := out.AllWarnings(); len(w) != 1 || w[0] != "c=50: captured 2 of 3 profiles: heap: 404 Not Found" {
		t.Errorf("AllWarnings() = %q", w)
	}
	var nilCapture *Record
	if nilCapture.Step("c=5", 0) != nil || nilCapture.Profiled() != nil || nilCapture.AllWarnings() != nil {
		t.Error("a nil capture should answer nil")
	}
}
