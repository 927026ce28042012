package stats

import (
	"math"
	"testing"
)

func TestSignedRankTest(t *testing.T) {
	tests := []struct {
		name  string
		d     []float64
		w, p  float64
		exact bool
	}{
		// Hollander & Wolfe's depression scores (x - y), as in R's wilcox.test example: V = 40, p = 0.03906.
		{"R example", []float64{0.952, -0.147, 1.022, 0.43, 0.62, 0.59, 0.49, -0.08, 0.01}, 40, 0.0390625, true},
		// All ten positive: the most extreme of 2^10 sign patterns on each side.
		{"all positive", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 55, 2.0 / 1024, true},
		// Perfectly balanced signs: no evidence at all.
		{"balanced", []float64{1, -1, 2, -2, 3, -3}, 10.5, 1, true},
		// Zeros are dropped: the same as the five non-zero values alone (p = 2/32).
		{"zeros dropped", []float64{0, 0, 1, 2, 3, 4, 5}, 15, 2.0 / 32, true},
		// Nothing but zeros: p = 1.
		{"all zero", []float64{0, 0, 0}, 0, 1, false},
		// Ties in |d| share mid-ranks and the p-value stays exact: ranks 2,2,2 and 4 with three
		// positive: W+ = 2+2+4 = 8 of 10; P(|S-5| >= 3) = P(S <= 2 or S >= 8) = 8/16.
		{"ties", []float64{1, 1, -1, 2}, 8, 0.5, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SignedRankTest(tt.d)
			if err != nil {
				t.Fatal(err)
			}
			if got.W != tt.w || math.Abs(got.P-tt.p) > 1e-9 || got.Exact != tt.exact {
				t.Errorf("SignedRankTest(%v) = W %v, p %v, exact %v; want W %v, p %v, exact %v", tt.d, got.W, got.P, got.Exact, tt.w, tt.p, tt.exact)
			}
		})
	}
	if _, err := SignedRankTest([]float64{1, math.NaN()}); err == nil {
		t.Error("SignedRankTest with NaN: no error, want one")
	}
}

// The normal approximation agrees with the exact p-value where both apply.
func TestSignedRankNormalAgrees(t *testing.T) {
	d := make([]float64, 40)
	for i := range d {
		d[i] = float64(i%7) - 2.2 + 0.01*float64(i)
	}
	exact, _ := signedRank(d, 1000)
	approx, _ := signedRank(d, 0)
	if !exact.Exact || approx.Exact || math.Abs(exact.P-approx.P) > 0.01 {
		t.Errorf("exact p %v (exact=%v), normal p %v (exact=%v): want within 0.01", exact.P, exact.Exact, approx.P, approx.Exact)
	}
}

func TestSignedRankMinP(t *testing.T) {
	for _, tt := range []struct {
		n int
		p float64
	}{{0, 1}, {1, 1}, {5, 0.0625}, {10, 2.0 / 1024}} {
		if got := SignedRankMinP(tt.n); got != tt.p {
			t.Errorf("SignedRankMinP(%d) = %v, want %v", tt.n, got, tt.p)
		}
	}
}

func TestHodgesLehmann(t *testing.T) {
	tests := []struct {
		name        string
		d           []float64
		conf        float64
		est, lo, hi float64
		level       float64
	}{
		// 1..10: Walsh averages run 1..10 in halves; the critical count for n=10 at 95% is 8,
		// so the interval is the 9th smallest and 9th largest of the 55 averages.
		{"1 to 10", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.95, 5.5, 3, 8, 1 - 2*25.0/1024},
		// Five pairs cannot reach 95%: the smallest tail is 1/32 > 0.025, no interval.
		{"too few", []float64{1, 2, 3, 4, 5}, 0.95, 3, math.Inf(-1), math.Inf(1), 1},
		// At 90% five pairs suffice: the interval spans min to max of the Walsh averages.
		{"five at 90%", []float64{1, 2, 3, 4, 5}, 0.90, 3, 1, 5, 1 - 2.0/32},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := HodgesLehmann(tt.d, tt.conf)
			if s.Estimate != tt.est || s.Lo != tt.lo || s.Hi != tt.hi || math.Abs(s.Level-tt.level) > 1e-9 {
				t.Errorf("HodgesLehmann(%v, %v) = %+v; want estimate %v, [%v, %v] at %v", tt.d, tt.conf, s, tt.est, tt.lo, tt.hi, tt.level)
			}
		})
	}
}
