package sweep

import (
	"fmt"
	"math"
	"strconv"
)

// Analysis is what a sweep found: indexes into its levels, -1 when there is none.
type Analysis struct {
	Peak int // the level with the highest QPS
	// Knee is where added load stops buying throughput within the objective: the largest
	// level at or below the peak that meets the objective. It is never after the peak.
	Knee int
	// Limit is the largest level meeting the objective, wherever it is; it differs from
	// Knee only when a level beyond the peak (serving less) still meets the objective.
	Limit    int
	Warnings []string // caveats about these
}

// Analyze finds the peak, the knee and the limit of levels (in ascending order) under o.
func Analyze(levels []Level, o Objective) Analysis { return analyze(levels, o, true) }

// analyze is Analyze; planned says the levels are a plan's (a sweep's), so a peak at the
// largest of them is worth a warning (not for the rates a capacity search chose).
func analyze(levels []Level, o Objective, planned bool) Analysis {
	a := Analysis{Peak: Peak(levels), Knee: -1, Limit: -1}
	for i, l := range levels {
		if l.Interrupted {
			a.Warnings = append(a.Warnings, fmt.Sprintf("%s was interrupted: its numbers are partial and it is neither the peak nor the knee", l.Label))
			continue
		}
		if l.GeneratorLimited() {
			a.Warnings = append(a.Warnings, fmt.Sprintf("%s is generator-limited (%s): its numbers are apiperf's ceiling, not the target's; it is neither the peak nor the knee",
				l.Label, l.GeneratorLimit.Brief()))
			continue
		}
		if l.QPS > 0 && o.Met(l) {
			a.Limit = i
			if i <= a.Peak {
				a.Knee = i
			}
		}
	}
	if a.Knee > 0 {
		for i := range a.Knee {
			if m := o.Misses(levels[i]); len(m) > 0 || levels[i].QPS == 0 {
				why := "nothing completed"
				if len(m) > 0 {
					why = m[0]
				}
				a.Warnings = append(a.Warnings, fmt.Sprintf("%s misses the objective (%s) but the larger %s meets it: the knee is uncertain; repeat each level (--count 3) or run longer",
					levels[i].Label, why, levels[a.Knee].Label))
				break
			}
		}
	}
	if planned && a.Peak >= 0 && a.Peak == len(levels)-1 && len(levels) > 1 {
		a.Warnings = append(a.Warnings, fmt.Sprintf("the peak is at the largest level run (%s): the target may go higher", levels[a.Peak].Label))
	}
	return a
}

// Peak is the index of the level with the highest QPS (the first on ties), -1 when no level
// completed a request; an interrupted level, whose numbers are partial, is never the peak, nor
// is a generator-limited one, which measured apiperf's machine rather than the target.
// It is the one peak rule: the analysis, a diff's sides and the profiles kept all use it.
func Peak(levels []Level) int {
	peak := -1
	for i, l := range levels {
		if l.QPS > 0 && !l.Interrupted && !l.GeneratorLimited() && (peak < 0 || l.QPS > levels[peak].QPS) {
			peak = i
		}
	}
	return peak
}

// PeakSummary is the peak's headline, e.g. "peak: c=200, 12345 req/s (p99 3.2ms, success 100%)".
func PeakSummary(levels []Level, peak int) string {
	if peak < 0 || peak >= len(levels) {
		return "peak: none (no level completed a request)"
	}
	p := levels[peak]
	return fmt.Sprintf("peak: %s, %s req/s (p99 %s, success %s%%)", p.Label, FormatQPS(p.QPS), formatLatency(round3(p.P99.Duration())), pct(p.Success))
}

// KneeSummary is the knee's headline, e.g. "knee: c=100, the largest level up to the peak
// meeting p99<=500ms,success>=99.9% (9876 req/s, p99 4.1ms)", or why there is none.
func KneeSummary(levels []Level, a Analysis, o Objective) string {
	knee := a.Knee
	if knee < 0 || knee >= len(levels) {
		if len(levels) == 0 {
			return "knee: none (no level was measured)"
		}
		if a.Limit >= 0 {
			return fmt.Sprintf("knee: none: no level up to the peak met %s", o)
		}
		why := "nothing completed"
		if m := o.Misses(levels[0]); len(m) > 0 {
			why = m[0]
		}
		return fmt.Sprintf("knee: none: no level met %s (%s: %s)", o, levels[0].Label, why)
	}
	p := levels[knee]
	return fmt.Sprintf("knee: %s, the largest level up to the peak meeting %s (%s req/s, p99 %s)", p.Label, o, FormatQPS(p.QPS), formatLatency(round3(p.P99.Duration())))
}

// LimitSummary is the headline of the largest level meeting the objective when it lies
// beyond the peak (and so differs from the knee); "" otherwise.
func LimitSummary(levels []Level, a Analysis, o Objective) string {
	if a.Limit < 0 || a.Limit >= len(levels) || a.Limit == a.Knee || a.Limit <= a.Peak {
		return ""
	}
	l := levels[a.Limit]
	return fmt.Sprintf("largest level meeting %s: %s, beyond the peak (%s req/s, p99 %s): more load, less throughput",
		o, l.Label, FormatQPS(l.QPS), formatLatency(round3(l.P99.Duration())))
}

// FormatQPS formats a measured QPS for headlines: whole numbers, one decimal below 100. A
// QPS is a measurement shown to display precision; a configured rate prints exactly, with
// load.FormatRate.
func FormatQPS(v float64) string {
	if v < 100 {
		return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
	}
	return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
}

// Comparison is how a sweep's peak compares with the same plan against the built-in plain
// net/http target (--vs-native).
type Comparison struct {
	Ratio       float64 `json:"ratio"`        // peak QPS / native peak QPS
	Label       string  `json:"label"`        // the sweep's peak level
	QPS         float64 `json:"qps"`          // the sweep's peak QPS
	NativeLabel string  `json:"native_label"` // the native peak level
	NativeQPS   float64 `json:"native_qps"`   // the native peak QPS
}

// Compare compares the peaks of a sweep and of its native run; false when either has none.
func Compare(levels []Level, peak int, native []Level, nativePeak int) (Comparison, bool) {
	if peak < 0 || peak >= len(levels) || nativePeak < 0 || nativePeak >= len(native) || native[nativePeak].QPS <= 0 {
		return Comparison{}, false
	}
	p, n := levels[peak], native[nativePeak]
	return Comparison{Ratio: p.QPS / n.QPS, Label: p.Label, QPS: p.QPS, NativeLabel: n.Label, NativeQPS: n.QPS}, true
}

// String is the headline, e.g. "peak QPS is 13.7% of plain net/http at c=200 (1234 vs 9012 req/s)".
func (c Comparison) String() string {
	share := strconv.FormatFloat(math.Round(c.Ratio*1000)/10, 'f', -1, 64)
	if c.Label == c.NativeLabel {
		return fmt.Sprintf("peak QPS is %s%% of plain net/http at %s (%s vs %s req/s)", share, c.Label, FormatQPS(c.QPS), FormatQPS(c.NativeQPS))
	}
	return fmt.Sprintf("peak QPS is %s%% of plain net/http (%s req/s at %s; plain net/http %s req/s at %s)",
		share, FormatQPS(c.QPS), c.Label, FormatQPS(c.NativeQPS), c.NativeLabel)
}
