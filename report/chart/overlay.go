package chart

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Overlay returns a diff chart of two runs drawn as charts of the same kind:
// A's series then B's, named "nameA: series" and "nameB: series", B dashed,
// each in its own palette colour. The x values are the union of both; a run
// has NaN (no point, a gap in its line) at the levels it did not measure.
// Categories that are all numbers ("500", "1k", "1.5M") are sorted by value.
func Overlay(a, b Chart, nameA, nameB string) (Chart, error) {
	if err := errors.Join(a.Validate(), b.Validate()); err != nil {
		return Chart{}, fmt.Errorf("overlaying charts: %w", err)
	}
	if (a.X == nil) != (b.X == nil) || a.LogY != b.LogY {
		return Chart{}, errors.New("overlaying charts: one has categorical x and the other numeric x, or only one has a log y axis")
	}
	out := a
	out.Series = nil
	if a.Title != b.Title {
		out.Title = nameA + " vs " + nameB
	}
	out.YRange = unionRange(a.YRange, b.YRange)
	out.YRightRange = unionRange(a.YRightRange, b.YRightRange)

	var idxA, idxB []int // position of each x of A and B in the union
	if a.X != nil {
		out.X, idxA, idxB = unionCategories(a.X, b.X)
	} else {
		out.XNum, idxA, idxB = unionNumbers(a.XNum, b.XNum)
	}
	n := out.points()
	add := func(c Chart, idx []int, name string, dashed bool) {
		for _, s := range c.Series {
			y := make([]float64, n)
			for i := range y {
				y[i] = math.NaN()
			}
			for i, v := range s.Y {
				y[idx[i]] = v
			}
			out.Series = append(out.Series, Series{Name: name + ": " + s.Name, Y: y, Right: s.Right, Dashed: dashed})
		}
	}
	add(a, idxA, nameA, false)
	add(b, idxB, nameB, true)
	return out, nil
}

// unionRange returns the smallest range covering both fixed ranges, or nil if neither is fixed.
func unionRange(a, b *Range) *Range {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return &Range{math.Min(a.Min, b.Min), math.Max(a.Max, b.Max)}
}

// unionCategories merges two category lists and returns where each input
// category landed. Numeric labels are ordered by value, others by first appearance.
func unionCategories(a, b []string) (out []string, idxA, idxB []int) {
	numeric := true
	for _, l := range slices.Concat(a, b) {
		if _, ok := parseLevel(l); !ok {
			numeric = false
		}
	}
	for _, l := range slices.Concat(a, b) {
		if !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	if numeric {
		slices.SortStableFunc(out, func(x, y string) int {
			fx, _ := parseLevel(x)
			fy, _ := parseLevel(y)
			switch {
			case fx < fy:
				return -1
			case fx > fy:
				return 1
			}
			return 0
		})
	}
	for _, l := range a {
		idxA = append(idxA, slices.Index(out, l))
	}
	for _, l := range b {
		idxB = append(idxB, slices.Index(out, l))
	}
	return out, idxA, idxB
}

// unionNumbers merges two lists of x values into one sorted list without
// duplicates and returns where each input value landed.
func unionNumbers(a, b []float64) (out []float64, idxA, idxB []int) {
	out = slices.Concat(a, b)
	slices.Sort(out)
	out = slices.Compact(out)
	for _, x := range a {
		i, _ := slices.BinarySearch(out, x)
		idxA = append(idxA, i)
	}
	for _, x := range b {
		i, _ := slices.BinarySearch(out, x)
		idxB = append(idxB, i)
	}
	return out, idxA, idxB
}

// parseLevel parses a category label that is a number with an optional k or M suffix.
func parseLevel(l string) (float64, bool) {
	mult := 1.0
	switch {
	case len(l) > 1 && (l[len(l)-1] == 'k' || l[len(l)-1] == 'K'):
		l, mult = l[:len(l)-1], 1e3
	case len(l) > 1 && l[len(l)-1] == 'M':
		l, mult = l[:len(l)-1], 1e6
	}
	v, err := strconv.ParseFloat(l, 64)
	return v * mult, err == nil && !math.IsNaN(v) && !math.IsInf(v, 0)
}
