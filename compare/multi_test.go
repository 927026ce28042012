package compare

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/conditions"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/sweep"
)

func side(name string, rate bool, qps map[float64]float64) Variant {
	v := Variant{Side: Side{Name: name, Rate: rate}}
	for _, val := range []float64{10, 50, 100, 200} {
		if q, ok := qps[val]; ok {
			v.Levels = append(v.Levels, sweep.Level{Value: val, Label: sweep.Label(rate, val), QPS: q, Attempts: 1000,
				Errors: measure.Errors{Timeout: int64(val / 10)}})
		}
	}
	return v
}

func TestMulti(t *testing.T) {
	a := side("a", false, map[float64]float64{10: 100, 50: 400, 100: 500})
	b := side("b", false, map[float64]float64{10: 200, 50: 800, 200: 900})
	c := side("c", false, map[float64]float64{10: 50, 50: 100})
	c.NativeQPS = 1000
	m := NewMulti([]Variant{a, b, c})
	// Only 10 and 50 were measured by all three.
	if len(m.Common) != 2 || m.Common[0] != 10 || m.Common[1] != 50 {
		t.Errorf("Common = %v, want [10 50]", m.Common)
	}
	for i, want := range []float64{100, 180, 20} {
		if got := m.PctOfFirst(i); math.Abs(got-want) > 1e-9 {
			t.Errorf("PctOfFirst(%d) = %v, want %v", i, got, want)
		}
	}
	if got := m.PctOfNative(2); got != 10 {
		t.Errorf("PctOfNative(c) = %v, want 10 (100 of 1000 req/s)", got)
	}
	if !math.IsNaN(m.PctOfNative(0)) {
		t.Errorf("PctOfNative(a) = %v, want NaN (no native run)", m.PctOfNative(0))
	}
	// a: 1 + 5 + 10 timeouts of 3000 attempts.
	if got := m.ErrorPct(0); math.Abs(got-16.0/30) > 1e-9 {
		t.Errorf("ErrorPct(a) = %v, want %v", got, 16.0/30)
	}
	if h := m.Headline(); !strings.Contains(h, "b has the highest peak: 900 req/s, 180.0% of a's 500 req/s") {
		t.Errorf("Headline = %q", h)
	}
	c.TargetCPU = 0.5
	m = NewMulti([]Variant{a, b, c})
	if got := m.CPUPerRequest(2); got != 5*time.Millisecond {
		t.Errorf("CPUPerRequest(c) = %v, want 5ms (0.5 cores at 100 req/s)", got)
	}
	if got := m.CPUPerRequest(0); got != -1 {
		t.Errorf("CPUPerRequest(a) = %v, want -1 (not sampled)", got)
	}
	if len(m.Warnings) != 0 {
		t.Errorf("Warnings = %v, want none", m.Warnings)
	}
	// Mixing a rate sweep in warns, and sharing no level warns.
	m = NewMulti([]Variant{a, side("r", true, map[float64]float64{200: 190})})
	if len(m.Warnings) != 2 {
		t.Errorf("NewMulti(concurrency, rate) warnings = %q, want the mix and no common level", m.Warnings)
	}
}

// TestMultiSharesNative: compared from saved directories, the runs of a variant sweep (same
// plan as the first, which carries the one --vs-native sweep) all get "% of native"; a run
// with another plan does not borrow it.
func TestMultiSharesNative(t *testing.T) {
	a := side("a", false, map[float64]float64{10: 100, 50: 400})
	a.NativeQPS = 1000
	b := side("b", false, map[float64]float64{10: 200, 50: 800})
	other := side("other", false, map[float64]float64{10: 50, 100: 300})
	m := NewMulti([]Variant{a, b, other})
	for i, want := range []float64{40, 80} {
		if got := m.PctOfNative(i); got != want {
			t.Errorf("PctOfNative(%s) = %v, want %v", m.Variants[i].Name, got, want)
		}
	}
	if got := m.PctOfNative(2); !math.IsNaN(got) {
		t.Errorf("PctOfNative(other) = %v, want NaN (another plan than a's native sweep)", got)
	}
	if len(m.Notes) != 1 || !strings.Contains(m.Notes[0], "the variants with its plan") {
		t.Errorf("Notes = %q, want one note saying which variants the native peak covers", m.Notes)
	}
}

// On a busy machine the headline ranks by the target's CPU per request, which other
// processes hardly move, and says when the peaks rank another variant first; on a quiet one
// (or without CPU figures) it ranks by peak QPS.
func TestMultiHeadlineBusy(t *testing.T) {
	busy := &conditions.Record{Steps: []conditions.StepSample{{Label: "c=50", Others: 1.2, OthersMax: 1.6}}}
	a := side("a", false, map[float64]float64{10: 100, 50: 500}) // 0.5 cores at 500 req/s: 1 ms a request
	b := side("b", false, map[float64]float64{10: 200, 50: 800}) // 1.6 cores at 800 req/s: 2 ms
	a.TargetCPU, b.TargetCPU = 0.5, 1.6
	for _, tt := range []struct {
		name       string
		cond       *conditions.Record
		cpu        bool
		want, lack string
	}{
		// quiet: the peaks decide
		{"quiet", nil, true, "b has the highest peak: 800 req/s, 160.0% of a's 500 req/s", "CPU per request"},
		// busy: the cheaper a leads, and the headline says the peaks rank b first
		{"busy", busy, true, "a costs the least target CPU per request: 1.00ms (ranked by CPU per request: on a busy machine, a's other processes took 1.20 cores",
			"highest peak: 800 req/s, 160.0% of a's 500 req/s; "},
		// busy without CPU figures: the peaks, with why they mean little
		{"busy, no CPU", busy, false, "b has the highest peak: 800 req/s, 160.0% of a's 500 req/s (on a busy machine", "costs the least"},
	} {
		va, vb := a, b
		va.Conditions = tt.cond
		if !tt.cpu {
			va.TargetCPU, vb.TargetCPU = 0, 0
		}
		h := NewMulti([]Variant{va, vb}).Headline()
		if !strings.Contains(h, tt.want) || strings.Contains(h, tt.lack) {
			t.Errorf("%s: Headline = %q; want %q, not %q", tt.name, h, tt.want, tt.lack)
		}
	}
	if h := func() string {
		va := a
		va.Conditions = busy
		return NewMulti([]Variant{va, b}).Headline()
	}(); !strings.HasSuffix(h, "; the peaks disagree: b has the highest peak: 800 req/s, 160.0% of a's 500 req/s") {
		t.Errorf("busy Headline = %q; want it to end saying the peaks rank b first", h)
	}
}
