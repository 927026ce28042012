package sweep

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/apiperf/apiperf/measure"
)

// Point is one level of a sweep as the analysis sees it: the median of its repetitions.
type Point struct {
	Label     string           `json:"label"`                   // "c=200" or "rate=1000/s", as the steps
	Level     float64          `json:"level"`                   // the concurrency or target rate
	Steps     []int            `json:"steps"`                   // indexes of the level's steps in the run
	QPS       float64          `json:"qps"`                     // completed requests per second
	Achieved  float64          `json:"achieved_rate,omitempty"` // open loop: requests attempted per second
	Success   float64          `json:"success_pct"`             // successful responses / attempts
	ErrorRate float64          `json:"errors_pct"`              // failed attempts / attempts, status errors included
	Errors    int64            `json:"errors"`                  // failed attempts, all repetitions together
	Mean      measure.Duration `json:"mean"`
	P50       measure.Duration `json:"p50"`
	P75       measure.Duration `json:"p75"`
	P90       measure.Duration `json:"p90"`
	P99       measure.Duration `json:"p99"`
	P999      measure.Duration `json:"p99_9"`
	P9999     measure.Duration `json:"p99_99"`
}

// Percentile returns the latency percentile named like an objective's metric ("p99.9").
func (p Point) Percentile(metric string) time.Duration {
	switch metric {
	case "p50":
		return p.P50.Duration()
	case "p75":
		return p.P75.Duration()
	case "p90":
		return p.P90.Duration()
	case "p99":
		return p.P99.Duration()
	case "p99.9":
		return p.P999.Duration()
	case "p99.99":
		return p.P9999.Duration()
	}
	return 0
}

// Points groups steps by the plan's levels (matching their labels) and returns one Point per
// level that has steps, in plan order, each the median of its repetitions.
func Points(plan Plan, steps []*measure.Step) []Point {
	var out []Point
	for i := range plan.Len() {
		label := plan.Label(i)
		var idx []int
		for j, s := range steps {
			if s != nil && s.Label == label {
				idx = append(idx, j)
			}
		}
		if len(idx) == 0 {
			continue
		}
		out = append(out, pointOf(label, plan.Level(i), plan.Open(), steps, idx))
	}
	return out
}

// pointOf computes the per-metric medians of the steps at idx.
func pointOf(label string, level float64, open bool, steps []*measure.Step, idx []int) Point {
	p := Point{Label: label, Level: level, Steps: idx}
	med := func(f func(s *measure.Step) float64) float64 {
		vs := make([]float64, len(idx))
		for k, j := range idx {
			vs[k] = f(steps[j])
		}
		return median(vs)
	}
	lat := func(q float64) measure.Duration {
		return measure.Duration(med(func(s *measure.Step) float64 {
			if s.Latency == nil || s.Latency.Count() == 0 {
				return 0
			}
			return float64(s.Latency.Percentile(q))
		}))
	}
	p.QPS = med((*measure.Step).QPS)
	p.Success = med((*measure.Step).SuccessRate)
	p.ErrorRate = med(func(s *measure.Step) float64 {
		if s.Attempts == 0 {
			return 0
		}
		return 100 * float64(s.Errors.Total()) / float64(s.Attempts)
	})
	if open {
		p.Achieved = med(func(s *measure.Step) float64 {
			if s.Elapsed <= 0 {
				return 0
			}
			return float64(s.Attempts) / s.Elapsed.Duration().Seconds()
		})
	}
	for _, j := range idx {
		p.Errors += steps[j].Errors.Total()
	}
	p.Mean = measure.Duration(med(func(s *measure.Step) float64 {
		if s.Latency == nil || s.Latency.Count() == 0 {
			return 0
		}
		return float64(s.Latency.Mean())
	}))
	p.P50, p.P75, p.P90, p.P99, p.P999, p.P9999 = lat(50), lat(75), lat(90), lat(99), lat(99.9), lat(99.99)
	return p
}

// median returns the middle value (the mean of the middle two for an even count).
func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Analysis is what a sweep found: indexes into its Points, -1 when there is none.
type Analysis struct {
	Peak     int      // the level with the highest QPS
	Knee     int      // the largest level meeting the objective
	Warnings []string // caveats about these two
}

// Analyze finds the peak and the knee of points (in ascending level order) under o.
func Analyze(points []Point, o Objective) Analysis {
	a := Analysis{Peak: -1, Knee: -1}
	for i, p := range points {
		if p.QPS > 0 && (a.Peak < 0 || p.QPS > points[a.Peak].QPS) {
			a.Peak = i
		}
		if p.QPS > 0 && o.Met(p) {
			a.Knee = i
		}
	}
	if a.Knee > 0 {
		for i := range a.Knee {
			if m := o.Misses(points[i]); len(m) > 0 || points[i].QPS == 0 {
				why := "nothing completed"
				if len(m) > 0 {
					why = m[0]
				}
				a.Warnings = append(a.Warnings, fmt.Sprintf("%s misses the objective (%s) but the larger %s meets it: the knee is uncertain; repeat each level (--count 3) or run longer",
					points[i].Label, why, points[a.Knee].Label))
				break
			}
		}
	}
	if a.Peak >= 0 && a.Peak == len(points)-1 && len(points) > 1 {
		a.Warnings = append(a.Warnings, fmt.Sprintf("the peak is at the largest level run (%s): the target may go higher", points[a.Peak].Label))
	}
	return a
}

// PeakSummary is the peak's headline, e.g. "peak: c=200, 12345 req/s (p99 3.2ms, success 100%)".
func PeakSummary(points []Point, peak int) string {
	if peak < 0 || peak >= len(points) {
		return "peak: none (no level completed a request)"
	}
	p := points[peak]
	return fmt.Sprintf("peak: %s, %s req/s (p99 %s, success %s%%)", p.Label, qps(p.QPS), formatLatency(round3(p.P99.Duration())), pct(p.Success))
}

// KneeSummary is the knee's headline, e.g. "knee: c=100, the largest level meeting
// p99<=500ms,success>=99.9% (9876 req/s, p99 4.1ms)", or why there is none.
func KneeSummary(points []Point, knee int, o Objective) string {
	if knee < 0 || knee >= len(points) {
		if len(points) == 0 {
			return "knee: none (no level was measured)"
		}
		why := "nothing completed"
		if m := o.Misses(points[0]); len(m) > 0 {
			why = m[0]
		}
		return fmt.Sprintf("knee: none: no level met %s (%s: %s)", o, points[0].Label, why)
	}
	p := points[knee]
	return fmt.Sprintf("knee: %s, the largest level meeting %s (%s req/s, p99 %s)", p.Label, o, qps(p.QPS), formatLatency(round3(p.P99.Duration())))
}

// qps formats requests per second: whole numbers, with one decimal below 100.
func qps(v float64) string {
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
func Compare(points []Point, peak int, native []Point, nativePeak int) (Comparison, bool) {
	if peak < 0 || peak >= len(points) || nativePeak < 0 || nativePeak >= len(native) || native[nativePeak].QPS <= 0 {
		return Comparison{}, false
	}
	p, n := points[peak], native[nativePeak]
	return Comparison{Ratio: p.QPS / n.QPS, Label: p.Label, QPS: p.QPS, NativeLabel: n.Label, NativeQPS: n.QPS}, true
}

// String is the headline, e.g. "peak QPS is 13.7% of plain net/http at c=200 (1234 vs 9012 req/s)".
func (c Comparison) String() string {
	share := strconv.FormatFloat(math.Round(c.Ratio*1000)/10, 'f', -1, 64)
	if c.Label == c.NativeLabel {
		return fmt.Sprintf("peak QPS is %s%% of plain net/http at %s (%s vs %s req/s)", share, c.Label, qps(c.QPS), qps(c.NativeQPS))
	}
	return fmt.Sprintf("peak QPS is %s%% of plain net/http (%s req/s at %s; plain net/http %s req/s at %s)",
		share, qps(c.QPS), c.Label, qps(c.NativeQPS), c.NativeLabel)
}
