// Package sample holds the statistics of a set of measured values (the repetitions of a
// level, the pairs of an A/B check): the one median every package reduces with. A new
// reduction of plain values goes here; one of histograms goes to measure.
package sample

import (
	"math"
	"slices"
)

// Median is the middle value of values (the mean of the middle two for an even count); it
// is NaN when there are none, never a made-up 0. values is not modified.
func Median(values []float64) float64 {
	if len(values) == 0 {
		return math.NaN()
	}
	s := slices.Clone(values)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}
