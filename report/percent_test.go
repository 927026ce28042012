package report

import (
	"math"
	"testing"
)

func TestFormatSuccess(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{
		{100, "100.00"},            // all succeeded
		{99.5, "99.50"},            // two decimals
		{99.998, "99.998"},         // two decimals would say 100.00 and hide 2 failures in 100,000
		{99.99999, "99.99999"},     // as many as it takes
		{99.99999995, "99.999999"}, // at most six, cut not rounded
		{0, "0.00"},
		{math.NaN(), "-"},
	} {
		if got := FormatSuccess(tc.in); got != tc.want {
			t.Errorf("FormatSuccess(%v) = %q; want %q", tc.in, got, tc.want)
		}
	}
}
