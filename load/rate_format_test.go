package load

import "testing"

func TestFormatRate(t *testing.T) {
	for _, tt := range []struct {
		v    float64
		want string
	}{
		{93.80000000000001, "93.8"}, // binary noise is not printed
		{25600, "25600"},            // a whole rate as it is
		{12.5, "12.5"},              // a fraction kept
		{3.125, "3.125"},            // four significant digits kept
		{0.1 + 0.2, "0.3"},          // 0.30000000000000004 rounded
		{187.5, "187.5"},            // a bisected probe rate
		{19998.4, "19998"},          // whole units never rounded away
		{1234.5, "1235"},            // was 1.23e+03 in the config line
		{1e6, "1000000"},            // was 1e+06 in --help
		{0, "0"},                    // no rate
	} {
		if got := FormatRate(tt.v); got != tt.want {
			t.Errorf("FormatRate(%v) = %q; want %q", tt.v, got, tt.want)
		}
	}
}
