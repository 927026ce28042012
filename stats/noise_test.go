package stats

import (
	"math"
	"testing"
)

func TestSuccessiveBand(t *testing.T) {
	// Alternating 100, 110: every successive difference is ln(1.1); band 1.96 x 1.4826 x that.
	got := SuccessiveBand([]float64{100, 110, 100, 110, 100}, true)
	want := math.Expm1(noiseZ*1.4826*math.Log(1.1)) * 100
	if math.Abs(got-want) > 1e-9 {
		t.Errorf("SuccessiveBand(100, 110, ..., ratio) = %v, want %v", got, want)
	}
	if got := SuccessiveBand([]float64{0.1, 0.3, 0.1}, false); math.Abs(got-noiseZ*1.4826*0.2) > 1e-9 {
		t.Errorf("SuccessiveBand(0.1, 0.3, 0.1, points) = %v, want %v", got, noiseZ*1.4826*0.2)
	}
	if got := SuccessiveBand([]float64{100, 0, 100}, true); got != 0 {
		t.Errorf("SuccessiveBand with a zero, ratio = %v, want 0 (no logs)", got)
	}
}

func TestMinN(t *testing.T) {
	for _, c := range []struct {
		alpha     float64
		mw, pairs int
		why       string
	}{
		{0.05, 4, 6, "MinP(4,4) = 2/70 < 0.05 <= MinP(3,3) = 0.1; 2/2^6 < 0.05 <= 2/2^5"},
		{0.05 / 3, 5, 7, "three checks: 2/252 < 0.0167 <= 2/70; 2/2^7 < 0.0167 <= 2/2^6"},
		{1, 2, 2, "at alpha 1: two values a side (MinP 1/3); one pair has p = 1, two 0.5"},
	} {
		if got := MannWhitneyMinN(c.alpha); got != c.mw {
			t.Errorf("MannWhitneyMinN(%g) = %d, want %d (%s)", c.alpha, got, c.mw, c.why)
		}
		if got := SignedRankMinN(c.alpha); got != c.pairs {
			t.Errorf("SignedRankMinN(%g) = %d, want %d (%s)", c.alpha, got, c.pairs, c.why)
		}
	}
}
