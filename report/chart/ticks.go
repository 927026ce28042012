package chart

import (
	"math"
	"strconv"
)

// niceStep returns a 1, 2 or 5 times a power of ten step that cuts span into
// about target intervals.
func niceStep(span float64, target int) float64 {
	if span <= 0 || target <= 0 {
		return 1
	}
	raw := span / float64(target)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	switch f := raw / mag; {
	case f <= 1:
		return mag
	case f <= 2:
		return 2 * mag
	case f <= 5:
		return 5 * mag
	default:
		return 10 * mag
	}
}

// linearRange returns the autoscaled range of a linear axis holding values
// from lo to hi: it starts at zero (or below, for negative data), so bars of
// QPS are not exaggerated, and ends on a tick.
func linearRange(lo, hi float64, ok bool) Range {
	if !ok {
		return Range{0, 1}
	}
	lo, hi = math.Min(lo, 0), math.Max(hi, 0)
	if lo == hi {
		return Range{lo, lo + 1}
	}
	step := niceStep(hi-lo, 5)
	return Range{math.Floor(lo/step) * step, math.Ceil(hi/step) * step}
}

// logRange returns the autoscaled range of a log axis: whole decades around the data.
func logRange(lo, hi float64, ok bool) Range {
	if !ok {
		return Range{1, 10}
	}
	r := Range{math.Pow(10, math.Floor(math.Log10(lo))), math.Pow(10, math.Ceil(math.Log10(hi)))}
	if r.Min == r.Max {
		r.Max *= 10
	}
	return r
}

// linearTicks returns labelled ticks on multiples of a nice step inside [min, max].
func linearTicks(min, max float64, target int) []tick {
	step := niceStep(max-min, target)
	prec := decimals(step)
	var ticks []tick
	for i := math.Ceil(min / step); ; i++ {
		v := i * step
		if v > max+step*1e-9 {
			break
		}
		if v == 0 {
			v = 0 // no "-0"
		}
		ticks = append(ticks, tick{Value: v, Label: formatTick(v, prec)})
	}
	return ticks
}

// logTicks returns ticks for a log axis: labels at each decade, and at 2 and 5
// times each decade when the axis spans few decades; unlabelled minor ticks
// at the other integer multiples.
func logTicks(min, max float64) []tick {
	decades := math.Log10(max / min)
	var ticks []tick
	for e := math.Floor(math.Log10(min)); e <= math.Ceil(math.Log10(max)); e++ {
		base := math.Pow(10, e)
		for m := 1; m < 10; m++ {
			v := base * float64(m)
			if v < min*(1-1e-9) || v > max*(1+1e-9) {
				continue
			}
			t := tick{Value: v}
			if m == 1 || (decades <= 2 && (m == 2 || m == 5)) {
				t.Label = formatTick(v, decimals(v))
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// decimals returns the number of decimals needed to print multiples of step.
func decimals(step float64) int {
	if step >= 1 {
		return 0
	}
	return int(math.Ceil(-math.Log10(step) - 1e-9))
}

// formatTick prints a tick value with prec decimals and k/M suffixes for
// round large numbers (50000 -> "50k"), as the charts of the sweep script did.
func formatTick(v float64, prec int) string {
	a := math.Abs(v)
	switch {
	case a >= 1e6 && math.Mod(a, 1e5) == 0:
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "M"
	case a >= 1e4 && math.Mod(a, 100) == 0:
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}
