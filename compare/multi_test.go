package compare

import (
	"math"
	"strings"
	"testing"
	"time"

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
