package stats

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/apiperf/apiperf/sample"
)

// Defaults of change-point detection.
const (
	// ChangeMinSegment is the fewest runs on each side of a change point.
	ChangeMinSegment = 3
	// ChangeAlpha is the significance level of each split's permutation test.
	ChangeAlpha = 0.01
	// changePermutations is how many shuffles each permutation test draws.
	changePermutations = 199
)

// ChangePoint is where a series of runs changes level: Index is the first run of the new
// level; Before and After the medians of the segments on either side (up to the
// neighbouring change points) and Change the move from Before to After, in percent.
type ChangePoint struct {
	Index  int     `json:"index"`
	Before float64 `json:"before"`
	After  float64 `json:"after"`
	Change float64 `json:"change_pct"`
	P      float64 `json:"p"` // permutation p-value of the split
}

// ChangePoints finds the change points of series (oldest first, e.g. the median p99 of each
// run) by E-divisive means (Matteson & James, 2014; the method MongoDB and Hunter use on
// performance history): split where the energy distance between the two sides, weighted by
// their sizes, is largest; keep the split when a permutation test finds it significant at
// ChangeAlpha; repeat inside each segment. Distances are |x - y| (exponent 1); each side
// holds at least ChangeMinSegment runs. The shuffles are seeded: same series, same answer.
func ChangePoints(series []float64) []ChangePoint {
	for _, v := range series {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
	}
	rng := rand.New(rand.NewPCG(0x5eed, uint64(len(series))))
	type split struct {
		at int
		p  float64
	}
	var found []split
	var divide func(lo, hi int) // [lo, hi)
	divide = func(lo, hi int) {
		seg := series[lo:hi]
		at, q := bestSplit(seg)
		if at < 0 {
			return
		}
		// Permutation test: how often does a shuffled segment split as well?
		shuffled := slices.Clone(seg)
		as := 0
		for range changePermutations {
			rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			if _, qs := bestSplit(shuffled); qs >= q {
				as++
			}
		}
		p := float64(as+1) / float64(changePermutations+1)
		if p >= ChangeAlpha {
			return
		}
		found = append(found, split{lo + at, p})
		divide(lo, lo+at)
		divide(lo+at, hi)
	}
	divide(0, len(series))
	slices.SortFunc(found, func(a, b split) int { return a.at - b.at })
	out := make([]ChangePoint, len(found))
	for i, s := range found {
		lo, hi := 0, len(series)
		if i > 0 {
			lo = found[i-1].at
		}
		if i+1 < len(found) {
			hi = found[i+1].at
		}
		before, after := sample.Median(series[lo:s.at]), sample.Median(series[s.at:hi])
		out[i] = ChangePoint{Index: s.at, Before: before, After: after, Change: PercentChange(before, after), P: s.p}
	}
	return out
}

// bestSplit returns the split index t of x with the largest statistic, as E-divisive's
// search over a left segment x[:t] and a right one x[t:k] (k <= len(x); each side at least
// ChangeMinSegment long, so a shift that is later undone is still seen):
//
//	Q(t, k) = (m n / (m+n)) (2/(m n) Σ|l-r| - 1/C(m,2) Σ|l-l'| - 1/C(n,2) Σ|r-r'|)
//
// with m = t, n = k - t, and that statistic; -1 when x is too short to split.
func bestSplit(x []float64) (int, float64) {
	n := len(x)
	if n < 2*ChangeMinSegment {
		return -1, 0
	}
	// dist[k][t] = Σ_{j<t} |x_j - x_k|, for t <= k.
	dist := make([][]float64, n)
	for k := range n {
		dist[k] = make([]float64, k+1)
		for t := 1; t <= k; t++ {
			dist[k][t] = dist[k][t-1] + math.Abs(x[t-1]-x[k])
		}
	}
	best, bestQ := -1, math.Inf(-1)
	var within float64 // Σ_{i<j<t} |x_i - x_j|, for the current t
	for t := 1; t <= n-ChangeMinSegment; t++ {
		within += dist[t-1][t-1]
		if t < ChangeMinSegment {
			continue
		}
		var between, right float64
		for k := t; k < n; k++ {
			between += dist[k][t]
			right += dist[k][k] - dist[k][t]
			m, r := float64(t), float64(k+1-t)
			if r < ChangeMinSegment {
				continue
			}
			e := 2*between/(m*r) - within/(m*(m-1)/2) - right/(r*(r-1)/2)
			if q := m * r / (m + r) * e; q > bestQ {
				best, bestQ = t, q
			}
		}
	}
	return best, bestQ
}

// PercentChange is the change from a to b in percent of a; a change from 0 counts as 100%.
func PercentChange(a, b float64) float64 {
	switch {
	case a == b:
		return 0
	case a == 0:
		return math.Copysign(100, b)
	}
	return (b - a) / math.Abs(a) * 100
}
