package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// steps makes n values around 1000 with relative noise, multiplied by (1+step) from each
// index in at on.
func steps(n int, noise float64, seed uint64, at map[int]float64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([]float64, n)
	level := 1000.0
	for i := range out {
		if s, ok := at[i]; ok {
			level *= 1 + s
		}
		out[i] = level * (1 + noise*rng.NormFloat64())
	}
	return out
}

func TestChangePoints(t *testing.T) {
	tests := []struct {
		name   string
		series []float64
		want   []int     // indexes of the change points
		change []float64 // their changes in percent, within 3 points
	}{
		// The case: a 10% step at run 15 of 30 with 2% noise.
		{"10% step", steps(30, 0.02, 1, map[int]float64{15: 0.10}), []int{15}, []float64{10}},
		{"10% drop, other noise", steps(30, 0.02, 7, map[int]float64{15: -0.10}), []int{15}, []float64{-10}},
		// A regression at 10 fixed at 22: two change points.
		{"up and back", steps(32, 0.02, 3, map[int]float64{10: 0.15, 22: -1 + 1/1.15}), []int{10, 22}, []float64{15, -13}},
		// Noise alone: no change point.
		{"flat", steps(30, 0.02, 2, nil), nil, nil},
		{"flat, noisier", steps(40, 0.05, 5, nil), nil, nil},
		// A step at the very start is not a segment of ChangeMinSegment runs: not reported.
		{"too short", steps(5, 0.02, 1, map[int]float64{3: 0.5}), nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ChangePoints(tt.series)
			if len(got) != len(tt.want) {
				t.Fatalf("ChangePoints = %+v, want change points at %v", got, tt.want)
			}
			for i, cp := range got {
				if cp.Index != tt.want[i] || math.Abs(cp.Change-tt.change[i]) > 3 || cp.P >= ChangeAlpha {
					t.Errorf("change point %d = %+v, want index %d, change %.0f%% ± 3, p < %v", i, cp, tt.want[i], tt.change[i], ChangeAlpha)
				}
			}
		})
	}
}

// The 10% step is found whatever the noise draws: always once, next to run 15, and at run
// 15 itself unless the noise makes a neighbour look like the new level (seed 117: run 14
// drew +2.7 sigma).
func TestChangePointsStepSeeds(t *testing.T) {
	exact := 0
	for seed := range uint64(20) {
		got := ChangePoints(steps(30, 0.02, 100+seed, map[int]float64{15: 0.10}))
		if len(got) != 1 || got[0].Index < 14 || got[0].Index > 16 {
			t.Errorf("seed %d: ChangePoints = %+v, want one at 15 (±1)", 100+seed, got)
		} else if got[0].Index == 15 {
			exact++
		}
	}
	if exact < 18 {
		t.Errorf("the change point was at run 15 for %d of 20 seeds, want 18 or more", exact)
	}
}

func TestBestSplit(t *testing.T) {
	// 0,0,0,1,1,1: the split at 3 separates perfectly: Q = (9/6) (2*9/9 - 0 - 0) = 3.
	at, q := bestSplit([]float64{0, 0, 0, 1, 1, 1})
	if at != 3 || math.Abs(q-3) > 1e-12 {
		t.Errorf("bestSplit = %d, %v; want 3, 3", at, q)
	}
	if at, _ := bestSplit([]float64{1, 2, 3}); at != -1 {
		t.Errorf("bestSplit of 3 values = %d, want -1", at)
	}
}
