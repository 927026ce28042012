package stats

import (
	"errors"
	"math"
	"slices"
)

// MannWhitneyExactLimit is the largest total sample size (n1+n2) whose p-value is computed
// exactly; larger samples use the normal approximation with tie and continuity corrections.
const MannWhitneyExactLimit = 100

// MannWhitney is the result of a two-sided Mann-Whitney U test: do a and b come from
// distributions with the same location?
type MannWhitney struct {
	N1, N2 int     // sample sizes
	U      float64 // U statistic of the first sample
	P      float64 // two-sided p-value
	Exact  bool    // P is exact (permutation distribution), not the normal approximation
}

// MannWhitneyTest runs a two-sided Mann-Whitney U test on samples a and b. Ties get mid-ranks;
// up to MannWhitneyExactLimit values the p-value is the exact permutation probability
// P(|R1 - E[R1]| >= |r1 - E[R1]|), which stays exact with ties.
func MannWhitneyTest(a, b []float64) (MannWhitney, error) {
	n1, n2 := len(a), len(b)
	res := MannWhitney{N1: n1, N2: n2, P: 1}
	if n1 == 0 || n2 == 0 {
		return res, errors.New("mann-whitney: need at least one value in each sample")
	}
	for _, v := range slices.Concat(a, b) {
		if math.IsNaN(v) {
			return res, errors.New("mann-whitney: sample holds NaN")
		}
	}
	ranks2, ties := doubledRanks(a, b) // 2 x mid-rank of every value, a's first
	n := n1 + n2
	var r1 int64 // 2 x rank sum of a
	for _, r := range ranks2[:n1] {
		r1 += r
	}
	res.U = float64(r1)/2 - float64(n1*(n1+1))/2
	mean2 := int64(n1) * int64(n+1) // E[2 R1]
	if n <= MannWhitneyExactLimit {
		res.P, res.Exact = exactP(ranks2, n1, abs64(r1-mean2), mean2), true
		return res, nil
	}
	res.P = normalP(res.U, n1, n2, ties)
	return res, nil
}

// normalP is the two-sided p-value of U under the normal approximation, with the tie
// correction of the variance and a continuity correction.
func normalP(u float64, n1, n2 int, ties float64) float64 {
	n := n1 + n2
	sigma := math.Sqrt(float64(n1*n2) / 12 * (float64(n+1) - ties/float64(n*(n-1))))
	if sigma == 0 || math.IsNaN(sigma) {
		return 1 // every value equal: no evidence of a difference
	}
	z := (math.Abs(u-float64(n1*n2)/2) - 0.5) / sigma
	return min(1, math.Erfc(max(z, 0)/math.Sqrt2))
}

// MinP is the smallest two-sided p-value a Mann-Whitney test of samples of sizes n1 and n2
// can give (when they do not overlap at all): 2 / C(n1+n2, n1).
func MinP(n1, n2 int) float64 {
	if n1 == 0 || n2 == 0 {
		return 1
	}
	// log C(n1+n2, n1) without overflow.
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x + 1)); return v }
	return min(1, 2/math.Exp(lg(n1+n2)-lg(n1)-lg(n2)))
}

// doubledRanks returns twice the mid-rank of every value of a then b (integers even with
// ties) and the tie term sum(t^3 - t) over groups of t equal values.
func doubledRanks(a, b []float64) ([]int64, float64) {
	n := len(a) + len(b)
	idx := make([]int, n)
	val := func(i int) float64 {
		if i < len(a) {
			return a[i]
		}
		return b[i-len(a)]
	}
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(x, y int) int {
		switch vx, vy := val(x), val(y); {
		case vx < vy:
			return -1
		case vx > vy:
			return 1
		}
		return 0
	})
	ranks := make([]int64, n)
	var ties float64
	for i := 0; i < n; {
		j := i
		for j+1 < n && val(idx[j+1]) == val(idx[i]) {
			j++
		}
		// Positions i..j (0-based) share the mid-rank ((i+1)+(j+1))/2.
		for k := i; k <= j; k++ {
			ranks[idx[k]] = int64(i + j + 2)
		}
		t := float64(j - i + 1)
		ties += t*t*t - t
		i = j + 1
	}
	return ranks, ties
}

// exactP is the probability, over all ways of choosing n1 of the ranks, that twice their sum
// is at least dev away from mean2. Counts are kept in float64: C(100, 50) ~ 1e29 fits with
// ample relative precision.
func exactP(ranks2 []int64, n1 int, dev, mean2 int64) float64 {
	var total int64
	for _, r := range ranks2 {
		total += r
	}
	// ways[k][s]: number of k-subsets of the ranks seen so far whose doubled sum is s.
	ways := make([][]float64, n1+1)
	for k := range ways {
		ways[k] = make([]float64, total+1)
	}
	ways[0][0] = 1
	for i, r := range ranks2 {
		for k := min(i+1, n1); k >= 1; k-- {
			prev, cur := ways[k-1], ways[k]
			for s := total; s >= r; s-- {
				cur[s] += prev[s-r]
			}
		}
	}
	var hit, all float64
	for s, w := range ways[n1] {
		all += w
		if abs64(int64(s)-mean2) >= dev {
			hit += w
		}
	}
	return min(1, hit/all)
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
