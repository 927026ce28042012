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

func TestOf(t *testing.T) {
	s := Of([]float64{3, math.NaN(), 1, math.Inf(1), 2})
	if len(s.Values) != 3 || s.Values[0] != 1 || s.Values[2] != 3 || s.Dropped != 2 || s.Median() != 2 {
		t.Errorf("Of(3, NaN, 1, +Inf, 2) = %+v, median %v; want [1 2 3], 2 dropped, median 2", s, s.Median())
	}
	if e := Of(nil); len(e.Values) != 0 || !math.IsNaN(e.Median()) {
		t.Errorf("Of(nil) = %+v, median %v; want empty, NaN", e, e.Median())
	}
}
