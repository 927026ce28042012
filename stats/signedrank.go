package stats

import (
	"errors"
	"math"
	"slices"

	"github.com/apiperf/apiperf/sample"
)

// SignedRankExactLimit is the largest number of non-zero differences whose Wilcoxon p-value
// is computed exactly; more use the normal approximation with a tie correction.
const SignedRankExactLimit = 50

// SignedRank is the result of a two-sided Wilcoxon signed-rank test on paired differences:
// is their distribution centred on zero? Zero differences are dropped (Wilcoxon's method).
type SignedRank struct {
	N     int     // non-zero differences
	Zeros int     // differences equal to zero, dropped
	W     float64 // sum of the ranks of the positive differences (W+)
	P     float64 // two-sided p-value
	Exact bool    // P is exact (the permutation distribution of signs), not the normal approximation
}

// SignedRankTest runs a two-sided Wilcoxon signed-rank test on the differences d. Tied
// absolute values get mid-ranks; up to SignedRankExactLimit non-zero differences the
// p-value is the exact probability over the 2^N equally likely sign patterns, which stays
// exact with ties.
func SignedRankTest(d []float64) (SignedRank, error) {
	return signedRank(d, SignedRankExactLimit)
}

// signedRank is SignedRankTest with its own limit for the exact p-value.
func signedRank(d []float64, exactLimit int) (SignedRank, error) {
	res := SignedRank{P: 1}
	var nz []float64
	for _, v := range d {
		switch {
		case math.IsNaN(v):
			return res, errors.New("signed-rank: differences hold NaN")
		case v == 0:
			res.Zeros++
		default:
			nz = append(nz, v)
		}
	}
	res.N = len(nz)
	if res.N == 0 {
		return res, nil // no evidence of a difference
	}
	abs := make([]float64, len(nz))
	for i, v := range nz {
		abs[i] = math.Abs(v)
	}
	ranks2, ties := doubledRanks(abs, nil)
	var w2, total int64 // 2 x W+, 2 x sum of all ranks
	for i, r := range ranks2 {
		total += r
		if nz[i] > 0 {
			w2 += r
		}
	}
	res.W = float64(w2) / 2
	dev := abs64(2*w2 - total) // |2 (2W+) - E[2 (2W+)]|, E[2W+] = total/2
	if res.N <= exactLimit {
		res.P, res.Exact = signedRankExactP(ranks2, total, dev), true
		return res, nil
	}
	n := float64(res.N)
	sigma := math.Sqrt(n*(n+1)*(2*n+1)/24 - ties/48)
	if sigma == 0 {
		return res, nil
	}
	z := (float64(dev)/4 - 0.5) / sigma
	res.P = min(1, math.Erfc(max(z, 0)/math.Sqrt2))
	return res, nil
}

// signedRankExactP is the probability, over every sign pattern, that twice the doubled
// positive rank sum is at least dev away from total: P(|2 S - total| >= dev).
func signedRankExactP(ranks2 []int64, total, dev int64) float64 {
	prob := make([]float64, total+1) // prob[s]: P(doubled positive rank sum = s)
	prob[0] = 1
	var reach int64
	for _, r := range ranks2 {
		reach += r
		for s := reach; s >= r; s-- {
			prob[s] = (prob[s] + prob[s-r]) / 2
		}
		for s := r - 1; s >= 0; s-- {
			prob[s] /= 2
		}
	}
	var p float64
	for s, q := range prob {
		if abs64(2*int64(s)-total) >= dev {
			p += q
		}
	}
	return min(1, p)
}

// SignedRankMinP is the smallest two-sided p-value a signed-rank test of n non-zero
// differences can give (all of one sign): 2 / 2^n.
func SignedRankMinP(n int) float64 {
	if n <= 0 {
		return 1
	}
	return min(1, math.Ldexp(2, -n))
}

// Shift is a Hodges-Lehmann estimate of where paired differences are centred, with the
// distribution-free confidence interval that inverts the signed-rank test.
type Shift struct {
	Estimate float64 // median of the Walsh averages (d_i + d_j) / 2, i <= j
	Lo, Hi   float64 // confidence interval; -Inf/+Inf when n is too small for the level
	Level    float64 // confidence actually reached (>= the one asked for), e.g. 0.951
}

// HodgesLehmann estimates the centre of the differences d and its confidence interval at
// level conf (e.g. 0.95) from the signed-rank distribution without ties: the interval is
// [W(k+1), W(M-k)] of the M sorted Walsh averages, k the largest count with P(W+ <= k) <= (1-conf)/2.
func HodgesLehmann(d []float64, conf float64) Shift {
	n := len(d)
	if n == 0 {
		return Shift{Estimate: math.NaN(), Lo: math.Inf(-1), Hi: math.Inf(1)}
	}
	walsh := make([]float64, 0, n*(n+1)/2)
	for i := range d {
		for j := i; j < n; j++ {
			walsh = append(walsh, (d[i]+d[j])/2)
		}
	}
	slices.Sort(walsh)
	s := Shift{Estimate: sample.Median(walsh), Lo: math.Inf(-1), Hi: math.Inf(1), Level: 1}
	cdf := signedRankCDF(n)
	k := -1
	for w, c := range cdf {
		if c > (1-conf)/2 {
			break
		}
		k = w
	}
	if k >= 0 {
		m := len(walsh)
		s.Lo, s.Hi = walsh[k], walsh[m-1-k]
		s.Level = 1 - 2*cdf[k]
	}
	return s
}

// signedRankCDF is P(W+ <= w) for w = 0..n(n+1)/2 under the null, ranks 1..n without ties.
func signedRankCDF(n int) []float64 {
	m := n * (n + 1) / 2
	prob := make([]float64, m+1)
	prob[0] = 1
	reach := 0
	for r := 1; r <= n; r++ {
		reach += r
		for s := reach; s >= r; s-- {
			prob[s] = (prob[s] + prob[s-r]) / 2
		}
		for s := r - 1; s >= 0; s-- {
			prob[s] /= 2
		}
	}
	for s := 1; s <= m; s++ {
		prob[s] += prob[s-1]
	}
	return prob
}
