// Package sample holds the statistics of a set of measured values (the repetitions of a
// level, one side of a gate check): the Sample type and the one median every package
// reduces with. A new reduction of plain values goes here; one of histograms, to measure.
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

// Sample is the values of one metric over repeated measurements (the repetitions of a
// level, one side of a gate check), as golang/perf's benchmath.Sample: in ascending order,
// with what is not a number (a step without the metric: NaN, an infinity) left out.
type Sample struct {
	Values  []float64 // ascending
	Dropped int       // values left out: NaN or infinite
}

// Of is the sample of values; values is not modified.
func Of(values []float64) Sample {
	var s Sample
	for _, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			s.Dropped++
			continue
		}
		s.Values = append(s.Values, v)
	}
	slices.Sort(s.Values)
	return s
}

// Median is the sample's median, NaN when it is empty (see Median).
func (s Sample) Median() float64 { return Median(s.Values) }
