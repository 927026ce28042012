package stats

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/apiperf/apiperf/sample"
)

// DefaultPower is the detection probability of the power statements: "a 4% change would be
// detected 95% of the time".
const DefaultPower = 0.95

// powerResamples is how many simulated experiments estimate one detection rate.
const powerResamples = 200

// powerLimit is the largest shift searched, in log units (a ratio of 10, i.e. ±1000%) or
// percentage points.
const powerLimit = math.Ln10

// smallestShift returns the smallest shift > 0 at which trial succeeds in at least
// DefaultPower of powerResamples simulated experiments, or false when even limit does not.
// Every rate is measured with the same random stream, so rate(delta) is smooth in delta.
func smallestShift(limit float64, trial func(delta float64, r *rand.Rand) bool) (float64, bool) {
	rate := func(delta float64) float64 {
		r := rand.New(rand.NewPCG(0x9e3779b97f4a7c15, 20))
		hits := 0
		for range powerResamples {
			if trial(delta, r) {
				hits++
			}
		}
		return float64(hits) / powerResamples
	}
	lo, hi := 0.0, limit/1024
	for rate(hi) < DefaultPower {
		if hi >= limit {
			return 0, false
		}
		lo, hi = hi, min(2*hi, limit)
	}
	for range 16 {
		mid := (lo + hi) / 2
		if rate(mid) >= DefaultPower {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, true
}

// Deviations returns v minus its centre, and the robust spread of v (1.4826 x MAD).
func Deviations(v []float64, centre float64) ([]float64, float64) {
	e := make([]float64, len(v))
	a := make([]float64, len(v))
	for i, x := range v {
		e[i] = x - centre
		a[i] = math.Abs(e[i])
	}
	return e, 1.4826 * sample.Median(a)
}

// draw fills dst (to its capacity) with normal noise of standard deviation sd around delta.
func draw(dst []float64, sd, delta float64, r *rand.Rand) []float64 {
	dst = dst[:0]
	for range cap(dst) {
		dst = append(dst, delta+sd*r.NormFloat64())
	}
	return dst
}

// signedRankP is the two-sided signed-rank p-value and the sign of the location of d
// (+1 when the positive ranks outweigh the negative). Simulations use it: it takes the
// normal approximation above 20 differences.
func signedRankP(d []float64) (float64, int) {
	res, _ := signedRank(d, 20)
	return res.P, wSign(res.W, res.N)
}

func wSign(w float64, n int) int {
	switch mean := float64(n*(n+1)) / 4; {
	case w > mean:
		return 1
	case w < mean:
		return -1
	}
	return 0
}

// PairedPower simulates the paired comparison of the log ratios (or differences) d: new
// experiments of as many pairs draw normal noise with d's robust spread (1.4826 x MAD
// around its Hodges-Lehmann centre; a rank test shrugs off the outliers an SD would count)
// around a shift, and run the same signed-rank test at alpha. Detect is
// the smallest shift found significant at alpha; fail, when not nil, says whether an
// estimate (shifted for the worse, sign worse) fails the gate, and Fail is the smallest
// shift that does.
func PairedPower(d []float64, alpha float64, worse int, fail func(est float64) bool) (detect, failAt float64, detectOK, failOK bool) {
	if len(d) == 0 || SignedRankMinP(len(d)) >= alpha {
		return 0, 0, false, false
	}
	_, sd := Deviations(d, HodgesLehmann(d, 0).Estimate)
	buf := make([]float64, 0, len(d))
	sig := func(delta float64, r *rand.Rand) (bool, []float64) {
		s := draw(buf, sd, delta, r)
		p, sign := signedRankP(s)
		return p < alpha && sign == SignOf(delta), s
	}
	detect, detectOK = smallestShift(powerLimit, func(delta float64, r *rand.Rand) bool {
		ok, _ := sig(delta, r) // a shift up and one down are detected alike: the test is symmetric
		return ok
	})
	if fail == nil || worse == 0 {
		return detect, 0, detectOK, false
	}
	failAt, failOK = smallestShift(powerLimit, func(delta float64, r *rand.Rand) bool {
		ok, s := sig(float64(worse)*delta, r)
		return ok && fail(HodgesLehmann(s, 0).Estimate)
	})
	return detect, failAt, detectOK, failOK
}

// UnpairedPower simulates the gate's Mann-Whitney comparison of two samples (log values,
// or raw for the error rate): new experiments of the same sizes draw normal noise with each
// sample's robust spread, the current one shifted, and run the same test at alpha.
func UnpairedPower(base, cur []float64, alpha float64, worse int, fail func(change float64) bool) (detect, failAt float64, detectOK, failOK bool) {
	if len(base) == 0 || len(cur) == 0 || MinP(len(base), len(cur)) >= alpha {
		return 0, 0, false, false
	}
	_, sb := Deviations(base, sample.Median(base))
	_, sc := Deviations(cur, sample.Median(cur))
	bb, cb := make([]float64, 0, len(base)), make([]float64, 0, len(cur))
	sig := func(delta float64, r *rand.Rand) (bool, float64) {
		b := draw(bb, sb, 0, r)
		c := draw(cb, sc, delta, r)
		change := sample.Median(c) - sample.Median(b)
		return mannWhitneyNormalP(b, c) < alpha && SignOf(change) == SignOf(delta), change
	}
	detect, detectOK = smallestShift(powerLimit, func(delta float64, r *rand.Rand) bool {
		ok, _ := sig(delta, r)
		return ok
	})
	if fail == nil || worse == 0 {
		return detect, 0, detectOK, false
	}
	failAt, failOK = smallestShift(powerLimit, func(delta float64, r *rand.Rand) bool {
		ok, change := sig(float64(worse)*delta, r)
		return ok && fail(change)
	})
	return detect, failAt, detectOK, failOK
}

// mannWhitneyNormalP is the Mann-Whitney p-value under the normal approximation: close
// enough to the exact one for a power estimate, and a hundred times quicker.
func mannWhitneyNormalP(a, b []float64) float64 {
	ranks2, ties := doubledRanks(a, b)
	var r1 int64
	for _, r := range ranks2[:len(a)] {
		r1 += r
	}
	u := float64(r1)/2 - float64(len(a)*(len(a)+1))/2
	return normalP(u, len(a), len(b), ties)
}

func SignOf(x float64) int {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// LogValues returns the natural logs of v, or nil when one is not positive.
func LogValues(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		if !(x > 0) {
			return nil
		}
		out[i] = math.Log(x)
	}
	return out
}

// LogToPercent turns a shift of logs into a percent change of the values (up for positive).
func LogToPercent(x float64) float64 { return math.Expm1(x) * 100 }

// sortedCopy returns v sorted, leaving v alone.
func sortedCopy(v []float64) []float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s
}
