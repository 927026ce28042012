// Package compare compares runs: the level-by-level diff of two runs (before/after a change,
// an API against plain net/http), the CI gate and the interleaved A/B decision, built on the
// statistical tests of package stats.
package compare

import (
	"fmt"
	"math"
	"sort"

	"github.com/apiperf/apiperf/conditions"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/sweep"
)

// Side is one run of a comparison, reduced to its levels in ascending order.
type Side struct {
	Name string `json:"name"`
	// Source is where the side was read from (a run directory, run.json or .dat path).
	Source string `json:"source,omitempty"`
	// Classic says the side came from a classic .dat file: no percentiles, classic success.
	Classic bool `json:"classic,omitempty"`
	// Rate says the levels are request rates (open loop), not concurrency.
	Rate   bool          `json:"rate,omitempty"`
	Levels []sweep.Level `json:"levels"`
	// Conditions is what the run was measured on; nil unknown (an older run, a .dat file).
	Conditions *conditions.Record `json:"conditions,omitempty"`
}

// Peak is the side's peak level by sweep.Peak, or nil when it has none.
func (s Side) Peak() *sweep.Level {
	if i := sweep.Peak(s.Levels); i >= 0 {
		return &s.Levels[i]
	}
	return nil
}

// FromRun reduces a run to its levels, the same ones every report of the run shows
// (sweep.Levels: repetitions reduced, ascending order).
func FromRun(name string, r *result.Run) Side {
	return Side{Name: name, Rate: r.Load.OpenLoop(), Levels: r.Levels().Levels, Conditions: r.Conditions}
}

// Row is one level of a diff: A's and B's figures at the same level value; a side that did
// not run the level is nil.
type Row struct {
	Value float64      `json:"value"`
	Label string       `json:"label"` // the value as printed: "200", "2500"
	A     *sweep.Level `json:"a,omitempty"`
	B     *sweep.Level `json:"b,omitempty"`
}

// Diff is the level-by-level comparison of run A against run B.
type Diff struct {
	A, B Side
	Rows []Row // the union of both sides' levels, joined by value and sorted
	// Classic says success rates are the classic script's figure on both sides, because at
	// least one side is a .dat file that has nothing else.
	Classic  bool
	Warnings []string
	// Notes are what a reader must know to read the numbers, e.g. that B measured another
	// URL than A (often the point of a diff, so not a warning).
	Notes []string `json:"notes,omitempty"`
	// Conditions is what the runs' conditions say (compare/conditions.go); nil with a .dat side.
	Conditions *ConditionsCheck
}

// New compares A with B, aligning levels by their value (never by position), so a level
// that only one run measured is a row with a gap on the other side.
func New(a, b Side) *Diff {
	d := &Diff{A: a, B: b, Classic: a.Classic || b.Classic, Conditions: conditionsOfDiff(a, b)}
	idx := map[float64]int{}
	add := func(l *sweep.Level, isA bool) {
		i, ok := idx[l.Value]
		if !ok {
			i = len(d.Rows)
			idx[l.Value] = i
			d.Rows = append(d.Rows, Row{Value: l.Value, Label: sweep.FormatValue(l.Value)})
		}
		if isA {
			d.Rows[i].A = l
		} else {
			d.Rows[i].B = l
		}
	}
	for i := range a.Levels {
		add(&a.Levels[i], true)
	}
	for i := range b.Levels {
		add(&b.Levels[i], false)
	}
	sort.SliceStable(d.Rows, func(i, j int) bool { return d.Rows[i].Value < d.Rows[j].Value })
	if a.Rate != b.Rate {
		d.Warnings = append(d.Warnings, fmt.Sprintf("%s is a %s sweep and %s a %s sweep: levels are not comparable", a.Name, kind(a.Rate), b.Name, kind(b.Rate)))
	}
	var onlyA, onlyB []string
	for _, r := range d.Rows {
		switch {
		case r.B == nil:
			onlyA = append(onlyA, r.Label)
		case r.A == nil:
			onlyB = append(onlyB, r.Label)
		}
	}
	if len(onlyA) > 0 {
		d.Warnings = append(d.Warnings, fmt.Sprintf("levels only %s measured: %v", a.Name, onlyA))
	}
	if len(onlyB) > 0 {
		d.Warnings = append(d.Warnings, fmt.Sprintf("levels only %s measured: %v", b.Name, onlyB))
	}
	if d.Classic {
		d.Warnings = append(d.Warnings, "success rates are the classic script's (socket errors only; non-2xx responses count as successes) because a .dat file has no other")
	}
	return d
}

func kind(rate bool) string {
	if rate {
		return "rate"
	}
	return "concurrency"
}

// Success is the success rate of l that this diff compares: classic or apiperf's.
func (d *Diff) Success(l *sweep.Level) float64 {
	if l == nil {
		return math.NaN()
	}
	if d.Classic {
		return l.Classic
	}
	return l.Success
}

// QPSRatio is A's QPS over B's at this level (NaN when a side is missing or B is 0).
func (r Row) QPSRatio() float64 {
	if r.A == nil || r.B == nil {
		return math.NaN()
	}
	return ratio(r.A.QPS, r.B.QPS)
}

// P99Ratio is A's p99 latency over B's at this level (NaN when unknown on either side).
func (r Row) P99Ratio() float64 {
	if r.A == nil || r.B == nil {
		return math.NaN()
	}
	return ratio(r.A.Millis(r.A.P99), r.B.Millis(r.B.P99))
}

func ratio(a, b float64) float64 {
	if b == 0 || math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return a / b
}

// PeakRatio is A's peak QPS over B's peak QPS, each at its own best level (NaN when a side
// has no levels or B's peak is 0).
func (d *Diff) PeakRatio() float64 {
	pa, pb := d.A.Peak(), d.B.Peak()
	if pa == nil || pb == nil {
		return math.NaN()
	}
	return ratio(pa.QPS, pb.QPS)
}

// Headline states the peak ratio: "A's peak QPS is 13.68% of B's (5120.00 at c=200 vs
// 37426.12 at c=500)".
func (d *Diff) Headline() string {
	pa, pb := d.A.Peak(), d.B.Peak()
	if pa == nil || pb == nil {
		return fmt.Sprintf("%s's and %s's peak QPS cannot be compared: a side has no levels", d.A.Name, d.B.Name)
	}
	r := d.PeakRatio()
	if math.IsNaN(r) {
		return fmt.Sprintf("%s's peak QPS is %.2f at %s; %s completed no requests", d.A.Name, pa.QPS, d.at(pa, d.A), d.B.Name)
	}
	return fmt.Sprintf("%s's peak QPS is %.2f%% of %s's (%.2f at %s vs %.2f at %s)",
		d.A.Name, 100*r, d.B.Name, pa.QPS, d.at(pa, d.A), pb.QPS, d.at(pb, d.B))
}

func (d *Diff) at(l *sweep.Level, s Side) string { return sweep.Label(s.Rate, l.Value) }
