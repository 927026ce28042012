package chart

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestOverlay(t *testing.T) {
	a := qpsChart()
	b := qpsChart()
	// B skipped 15000 and measured 100 in addition.
	b.X = append([]string{"100"}, slices.Delete(slices.Clone(b.X), 6, 7)...)
	for i := range b.Series {
		s := slices.Delete(slices.Clone(b.Series[i].Y), 6, 7)
		b.Series[i].Y = append([]float64{1}, s...)
	}
	got, err := Overlay(a, b, "before", "after")
	if err != nil {
		t.Fatalf("Overlay() = %v", err)
	}
	if err := got.Validate(); err != nil {
		t.Fatalf("Overlay() gave an invalid chart: %v", err)
	}
	wantX := "100 200 500 1000 3000 5000 10000 15000 20000 25000 50000"
	if x := strings.Join(got.X, " "); x != wantX {
		t.Errorf("Overlay() X = %q, want %q", x, wantX)
	}
	var names []string
	for _, s := range got.Series {
		names = append(names, s.Name)
	}
	if n := strings.Join(names, "|"); n != "before: QPS|before: TTLB avg (ms)|after: QPS|after: TTLB avg (ms)" {
		t.Errorf("Overlay() series names = %q", n)
	}
	for i, s := range got.Series {
		b := i >= 2
		if s.Dashed != b || s.Right != (i%2 == 1) {
			t.Errorf("series %q: Dashed=%v Right=%v, want Dashed=%v Right=%v", s.Name, s.Dashed, s.Right, b, i%2 == 1)
		}
	}
	// A has no 100, B has no 15000: gaps, not invented values.
	if !math.IsNaN(got.Series[0].Y[0]) || !math.IsNaN(got.Series[2].Y[7]) {
		t.Errorf("Overlay() A[100]=%v B[15000]=%v, want NaN for both", got.Series[0].Y[0], got.Series[2].Y[7])
	}
	if got.Series[0].Y[1] != a.Series[0].Y[0] || got.Series[2].Y[0] != 1 || got.Series[2].Y[10] != b.Series[0].Y[9] {
		t.Errorf("Overlay() moved values to the wrong level: A=%v B=%v", got.Series[0].Y, got.Series[2].Y)
	}
	if got.Title != a.Title {
		t.Errorf("Overlay() Title = %q, want the shared title %q", got.Title, a.Title)
	}
}

func TestOverlayNumericAndErrors(t *testing.T) {
	a := Chart{XNum: []float64{0, 1, 2}, Series: []Series{{Name: "q", Y: []float64{1, 2, 3}}}, YRange: &Range{0, 10}}
	b := Chart{XNum: []float64{1.5, 2}, Series: []Series{{Name: "q", Y: []float64{5, 6}}}, YRange: &Range{0, 20}}
	got, err := Overlay(a, b, "A", "B")
	if err != nil {
		t.Fatalf("Overlay() = %v", err)
	}
	if !slices.Equal(got.XNum, []float64{0, 1, 1.5, 2}) {
		t.Errorf("Overlay() XNum = %v, want [0 1 1.5 2]", got.XNum)
	}
	if y := got.Series[1].Y; !math.IsNaN(y[0]) || y[2] != 5 || y[3] != 6 {
		t.Errorf("Overlay() B = %v, want [NaN NaN 5 6]", y)
	}
	if *got.YRange != (Range{0, 20}) {
		t.Errorf("Overlay() YRange = %v, want the union [0, 20]", *got.YRange)
	}
	// Mixing categorical and numeric x is refused.
	if _, err := Overlay(a, qpsChart(), "A", "B"); err == nil {
		t.Errorf("Overlay(numeric, categorical) = nil error, want one")
	}
	// An invalid input is refused with its problem.
	if _, err := Overlay(a, Chart{}, "A", "B"); err == nil || !strings.Contains(err.Error(), "no series") {
		t.Errorf("Overlay(a, Chart{}) = %v, want a validation error", err)
	}
}

func TestParseLevel(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"200", 200, true},    // plain number
		{"1k", 1000, true},    // k suffix as in wrk's -c 1k
		{"1.5M", 1.5e6, true}, // M suffix
		{"k", 0, false},       // a suffix alone is not a number
		{"fast", 0, false},    // words are not levels
		{"NaNk", 0, false},    // NaN is not a level
	}
	for _, tt := range tests {
		got, ok := parseLevel(tt.in)
		if ok != tt.ok || (ok && got != tt.want) {
			t.Errorf("parseLevel(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
