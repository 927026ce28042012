package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestMannWhitneyTest(t *testing.T) {
	seq := func(from, n int) []float64 {
		s := make([]float64, n)
		for i := range s {
			s[i] = float64(from + i)
		}
		return s
	}
	tests := []struct {
		a, b  []float64
		u, p  float64
		exact bool
	}{
		// Two samples of 5 that do not overlap: the smallest p a 5 vs 5 test can give, 2/252.
		{seq(1, 5), seq(6, 5), 0, 2.0 / 252, true},
		// The same, reversed: the test is two-sided, so the same p; U is n1*n2.
		{seq(6, 5), seq(1, 5), 25, 2.0 / 252, true},
		// 3 vs 3 apart: 2/20, never below alpha 0.05 (too few samples to decide).
		{seq(1, 3), seq(4, 3), 0, 0.1, true},
		// One swap: U=1, P(U<=1) = 2/20 per tail.
		{[]float64{1, 2, 4}, []float64{3, 5, 6}, 1, 0.2, true},
		// Ties get mid-ranks and the permutation p stays exact: 4 of 20 subsets as extreme.
		{[]float64{1, 1, 2}, []float64{2, 3, 3}, 0.5, 0.2, true},
		// Identical samples: no evidence at all.
		{[]float64{7, 7, 7}, []float64{7, 7, 7}, 4.5, 1, true},
		// One value each can never be significant.
		{[]float64{1}, []float64{2}, 0, 1, true},
		// Above the exact limit: normal approximation, far apart gives a tiny p.
		{seq(0, 60), seq(60, 60), 0, 1e-20, false},
	}
	for _, tt := range tests {
		got, err := MannWhitneyTest(tt.a, tt.b)
		if err != nil {
			t.Fatalf("MannWhitneyTest(%v, %v): %v", tt.a, tt.b, err)
		}
		closeP := math.Abs(got.P-tt.p) < 1e-12 || (!tt.exact && got.P < 1e-10)
		if got.U != tt.u || !closeP || got.Exact != tt.exact {
			t.Errorf("MannWhitneyTest(%v, %v) = U %v p %v exact %v; want U %v p %v exact %v",
				tt.a, tt.b, got.U, got.P, got.Exact, tt.u, tt.p, tt.exact)
		}
	}
}

func TestMannWhitneyErrors(t *testing.T) {
	if _, err := MannWhitneyTest(nil, []float64{1}); err == nil {
		t.Error("MannWhitneyTest(empty, [1]) = nil error; want an error")
	}
	if _, err := MannWhitneyTest([]float64{math.NaN()}, []float64{1}); err == nil {
		t.Error("MannWhitneyTest([NaN], [1]) = nil error; want an error")
	}
}

// The exact p and the normal approximation must agree on samples large enough for the
// approximation to hold (a check of both against each other).
func TestMannWhitneyExactMatchesNormal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for shift := range 4 {
		a, b := make([]float64, 40), make([]float64, 40)
		for i := range a {
			a[i] = math.Round(rng.NormFloat64() * 10) // rounded: ties as in HDR buckets
			b[i] = math.Round(rng.NormFloat64()*10 + float64(shift)*2)
		}
		got, _ := MannWhitneyTest(a, b)
		r, ties := doubledRanks(a, b)
		var r1 int64
		for _, v := range r[:40] {
			r1 += v
		}
		approx := normalP(float64(r1)/2-40*41/2, 40, 40, ties)
		if !got.Exact || math.Abs(got.P-approx) > 0.01 {
			t.Errorf("shift %d: exact p %v (exact %v), normal approximation %v; want within 0.01", shift*2, got.P, got.Exact, approx)
		}
	}
}

func TestMinP(t *testing.T) {
	tests := []struct {
		n1, n2 int
		want   float64
	}{
		{5, 5, 2.0 / 252}, // count 5 vs 5 can reach alpha 0.05
		{3, 3, 0.1},       // count 3 vs 3 cannot
		{1, 1, 1},         // single runs: never
		{0, 4, 1},         // no data
	}
	for _, tt := range tests {
		if got := MinP(tt.n1, tt.n2); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("MinP(%d, %d) = %v; want %v", tt.n1, tt.n2, got, tt.want)
		}
	}
}
