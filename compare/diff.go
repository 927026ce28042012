// Package compare compares runs: the level-by-level diff of two runs (before/after a change,
// an API against plain net/http), and the statistics and CI gate built on it.
package compare

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/result"
)

// Level is one load level of a run, its repetitions pooled: the numbers a sweep chart and a
// diff table show. Figures a source does not have (a classic .dat file has no percentiles
// and no honest success rate) are NaN.
type Level struct {
	Value float64 `json:"value"` // concurrency, or requests/s in open loop
	Label string  `json:"label"` // Value as printed: "200", "2500"
	Reps  int     `json:"reps"`  // steps pooled into this level

	QPS    float64 `json:"qps"`     // mean over repetitions of completed responses per second
	MeanMS float64 `json:"mean_ms"` // mean latency of complete responses
	P50MS  float64 `json:"p50_ms"`
	P90MS  float64 `json:"p90_ms"`
	P99MS  float64 `json:"p99_ms"`
	P999MS float64 `json:"p99_9_ms"`
	// SuccessPct is apiperf's success rate: successful responses / attempts (a 404 fails).
	SuccessPct float64 `json:"success_pct"`
	// ClassicPct is the classic script's figure: responses minus socket errors over responses.
	ClassicPct float64 `json:"classic_success_pct"`

	Attempts int64          `json:"attempts"`
	Errors   measure.Errors `json:"errors"`
	Status   map[int]int64  `json:"status,omitempty"`
}

// Side is one run of a comparison, reduced to its levels in ascending order.
type Side struct {
	Name string `json:"name"`
	// Source is where the side was read from (a run directory, run.json or .dat path).
	Source string `json:"source,omitempty"`
	// Classic says the side came from a classic .dat file: no percentiles, classic success.
	Classic bool `json:"classic,omitempty"`
	// Rate says the levels are request rates (open loop), not concurrency.
	Rate   bool    `json:"rate,omitempty"`
	Levels []Level `json:"levels"`
}

// Peak is the level with the highest QPS (the first one on ties), or nil without levels.
func (s Side) Peak() *Level {
	var best *Level
	for i := range s.Levels {
		l := &s.Levels[i]
		if !math.IsNaN(l.QPS) && (best == nil || l.QPS > best.QPS) {
			best = l
		}
	}
	return best
}

// LevelOf returns the level value of a step: its target rate in open loop, else its concurrency.
func LevelOf(s *measure.Step) float64 {
	if s.Open != nil {
		return s.Open.TargetRate
	}
	return float64(s.Concurrency)
}

// FormatLevel prints a level value the way the charts and tables label it.
func FormatLevel(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// FromRun reduces a run to its levels: steps of the same level value (repetitions) are
// pooled, levels are sorted by value whatever order they ran in.
func FromRun(name string, r *result.Run) Side {
	side := Side{Name: name, Rate: r.Load.OpenLoop()}
	byValue := map[float64][]*measure.Step{}
	var values []float64
	for _, s := range r.Steps {
		if s == nil {
			continue
		}
		v := LevelOf(s)
		if _, ok := byValue[v]; !ok {
			values = append(values, v)
		}
		byValue[v] = append(byValue[v], s)
	}
	sort.Float64s(values)
	for _, v := range values {
		side.Levels = append(side.Levels, pool(v, byValue[v]))
	}
	return side
}

// pool combines the repetitions of one level.
func pool(v float64, steps []*measure.Step) Level {
	l := Level{Value: v, Label: FormatLevel(v), Reps: len(steps), Status: map[int]int64{}}
	lat := measure.NewHistogram()
	var requests, successes int64
	for _, s := range steps {
		l.QPS += s.QPS() / float64(len(steps))
		if s.Latency != nil {
			lat.Merge(s.Latency)
		}
		l.Attempts += s.Attempts
		requests += s.Requests
		successes += s.Successes
		e := &l.Errors
		e.Connect += s.Errors.Connect
		e.Read += s.Errors.Read
		e.Write += s.Errors.Write
		e.Timeout += s.Errors.Timeout
		e.Status += s.Errors.Status
		e.Protocol += s.Errors.Protocol
		for code, n := range s.Status {
			l.Status[code] += n
		}
	}
	ms := func(p float64) float64 {
		if lat.Count() == 0 {
			return math.NaN()
		}
		return float64(lat.Percentile(p)) / float64(time.Millisecond)
	}
	l.MeanMS, l.P50MS, l.P90MS, l.P99MS, l.P999MS = math.NaN(), ms(50), ms(90), ms(99), ms(99.9)
	if lat.Count() > 0 {
		l.MeanMS = float64(lat.Mean()) / float64(time.Millisecond)
	}
	if l.Attempts > 0 {
		l.SuccessPct = 100 * float64(successes) / float64(l.Attempts)
	}
	if requests > 0 {
		l.ClassicPct = 100 * float64(requests-l.Errors.Socket()) / float64(requests)
	}
	return l
}

// Row is one level of a diff: A's and B's figures at the same level value; a side that did
// not run the level is nil.
type Row struct {
	Value float64 `json:"value"`
	Label string  `json:"label"`
	A     *Level  `json:"a,omitempty"`
	B     *Level  `json:"b,omitempty"`
}

// Diff is the level-by-level comparison of run A against run B.
type Diff struct {
	A, B Side
	Rows []Row // the union of both sides' levels, joined by value and sorted
	// Classic says success rates are the classic script's figure on both sides, because at
	// least one side is a .dat file that has nothing else.
	Classic  bool
	Warnings []string
}

// New compares A with B, aligning levels by their value (never by position), so a level
// that only one run measured is a row with a gap on the other side.
func New(a, b Side) *Diff {
	d := &Diff{A: a, B: b, Classic: a.Classic || b.Classic}
	idx := map[float64]int{}
	add := func(l *Level, isA bool) {
		i, ok := idx[l.Value]
		if !ok {
			i = len(d.Rows)
			idx[l.Value] = i
			d.Rows = append(d.Rows, Row{Value: l.Value, Label: l.Label})
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
func (d *Diff) Success(l *Level) float64 {
	if l == nil {
		return math.NaN()
	}
	if d.Classic {
		return l.ClassicPct
	}
	return l.SuccessPct
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
	return ratio(r.A.P99MS, r.B.P99MS)
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

func (d *Diff) at(l *Level, s Side) string {
	if s.Rate {
		return "rate=" + l.Label + "/s"
	}
	return "c=" + l.Label
}
