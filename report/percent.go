package report

import (
	"math"
	"strconv"
)

// FormatSuccess prints a success rate in percent (without the sign) with two decimals, or
// more when two would round a rate below 100 up to "100.00": 99.998 is "99.998", never a
// 100 that hides failed requests. NaN is "-".
func FormatSuccess(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	s := strconv.FormatFloat(v, 'f', 2, 64)
	for prec := 3; v < 100 && isHundred(s); prec++ {
		if prec > 6 { // 99.99999995: cut, do not round, at six decimals
			return strconv.FormatFloat(math.Floor(v*1e6)/1e6, 'f', 6, 64)
		}
		s = strconv.FormatFloat(v, 'f', prec, 64)
	}
	return s
}

// isHundred reports whether s reads 100 (any number of decimal zeros).
func isHundred(s string) bool {
	f, err := strconv.ParseFloat(s, 64)
	return err == nil && f == 100
}
