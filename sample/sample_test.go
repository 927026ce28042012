package sample

import (
	"math"
	"testing"
)

func TestMedian(t *testing.T) {
	tests := []struct {
		in   []float64
		want float64
	}{
		{[]float64{3, 1, 2}, 2},      // odd count: the middle value, input unsorted
		{[]float64{4, 1, 3, 2}, 2.5}, // even count: mean of the middle two
		{[]float64{5}, 5},            // one value
	}
	for _, tt := range tests {
		if got := Median(tt.in); got != tt.want {
			t.Errorf("Median(%v) = %v; want %v", tt.in, got, tt.want)
		}
	}
	if got := Median(nil); !math.IsNaN(got) {
		t.Errorf("Median(nil) = %v; want NaN", got)
	}
}

func TestMedianDoesNotModify(t *testing.T) {
	in := []float64{3, 1, 2}
	Median(in)
	if in[0] != 3 || in[1] != 1 || in[2] != 2 {
		t.Errorf("Median(%v) reordered its input; want it untouched", in)
	}
}
