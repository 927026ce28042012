package stats

import (
	"math"

	"github.com/apiperf/apiperf/sample"
)

// noiseZ is the two-sided 95% normal quantile: a band that an A/A difference of two runs
// exceeds one time in twenty.
const noiseZ = 1.959964

// SuccessiveBand is the 95% band of the difference of two runs of unchanged code, from the
// successive differences of a series v of runs (logs of v when ratio): 1.96 x 1.4826 x their
// median absolute value, which a one-off shift in the series (a past regression) moves little.
// It is in percent when ratio, else in v's unit; 0 when a value is not positive (ratio).
func SuccessiveBand(v []float64, ratio bool) float64 {
	if ratio {
		if v = LogValues(v); v == nil {
			return 0
		}
	}
	d := make([]float64, 0, len(v)-1)
	for i := 1; i < len(v); i++ {
		d = append(d, math.Abs(v[i]-v[i-1]))
	}
	band := noiseZ * 1.4826 * sample.Median(d)
	if ratio {
		return LogToPercent(band)
	}
	return band
}

// MannWhitneyMinN is the fewest values on each side with which a Mann-Whitney test can be
// significant at alpha (MinP(n, n) < alpha); at least 2.
func MannWhitneyMinN(alpha float64) int {
	n := 2
	for MinP(n, n) >= alpha {
		n++
	}
	return n
}

// SignedRankMinN is the fewest pairs with which a signed-rank test can be significant at
// alpha (SignedRankMinP(n) < alpha); at least 1.
func SignedRankMinN(alpha float64) int {
	n := 1
	for SignedRankMinP(n) >= alpha {
		n++
	}
	return n
}
