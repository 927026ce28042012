package sweep

import (
	"fmt"
	"testing"
)

// Probe rates print as a person would write them: three significant digits, never the
// float arithmetic behind them (93.80000000000001).
func TestRoundRatePrintsClean(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{
		{93.8, "93.8"},              // 938*0.1 would be 93.80000000000001
		{212.10000000000002, "212"}, // a bisection of 141.4 and 282.8
		{0.7 * 3, "2.1"},            // 2.0999999999999996
		{1234567, "1230000"},        // large rates keep three digits
		{0.0123456, "0.0123"},       // and small ones
	} {
		got := roundRate(tc.in)
		if s := FormatValue(got); s != tc.want || fmt.Sprintf("%g", got) != fmt.Sprintf("%g", mustParse(tc.want)) {
			t.Errorf("roundRate(%v) = %s (FormatValue); want %s", tc.in, s, tc.want)
		}
	}
}

func mustParse(s string) float64 {
	var f float64
	fmt.Sscan(s, &f)
	return f
}
