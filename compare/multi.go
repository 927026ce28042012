package compare

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/apiperf/apiperf/conditions"
	"github.com/apiperf/apiperf/exectrace"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/sweep"
)

// Variant is one run of an N-way comparison: its levels, its knee, and what the target and
// the connections cost at its peak.
type Variant struct {
	Side
	// Knee is the level value of the knee; 0 when the run has none.
	Knee float64 `json:"knee,omitempty"`
	// TargetCPU (cores, mean) and TargetRSS (bytes, max) are the target's at the peak; 0 unknown.
	TargetCPU float64 `json:"target_cpu_cores,omitempty"`
	TargetRSS float64 `json:"target_rss_bytes,omitempty"`
	// NativeQPS is the peak QPS of the same plan against plain net/http (--vs-native); 0 when not run.
	NativeQPS float64 `json:"native_qps,omitempty"`
	// RequestsPerConn is the attempts per connection opened at the peak (1 without
	// keep-alive); 0 when the run did not count connections.
	RequestsPerConn float64 `json:"requests_per_conn,omitempty"`
	// TraceLevel and Trace are the target's execution trace summary at the peak (else at the
	// last traced level); nil without a trace (compare/trace.go).
	TraceLevel string             `json:"trace_level,omitempty"`
	Trace      *exectrace.Summary `json:"trace,omitempty"`
}

// VariantOf reduces a run to a variant named name.
func VariantOf(name string, r *result.Run) Variant {
	v := Variant{Side: FromRun(name, r)}
	rec := r.Levels()
	if k := rec.KneeLevel(); k != nil {
		v.Knee = k.Value
	}
	v.TargetCPU, v.TargetRSS = r.PeakUsage()
	if s := PeakTrace(r); s != nil {
		v.TraceLevel, v.Trace = s.Label, s.Trace.Summary
	}
	if r.Native != nil {
		if p := r.Native.Levels().PeakLevel(); p != nil {
			v.NativeQPS = p.QPS
		}
	}
	if p := rec.PeakLevel(); p != nil {
		var conns int64
		for _, j := range p.Steps {
			if j >= 0 && j < len(r.Steps) {
				conns += r.Steps[j].Connects
			}
		}
		if conns > 0 {
			v.RequestsPerConn = float64(p.Attempts) / float64(conns)
		}
	}
	return v
}

// Multi compares N runs (variants of one API, frameworks, settings); the first is the
// reference every other is measured against.
type Multi struct {
	Variants []Variant `json:"variants"`
	// Common lists the level values every variant measured, ascending.
	Common []float64 `json:"common"`
	// Rate says the levels are request rates (open loop).
	Rate bool `json:"rate,omitempty"`
	// Notes explain the table (what a column is measured against); they are not caveats.
	Notes []string `json:"notes,omitempty"`
	// Conditions is what the runs' conditions say, each against the first's.
	Conditions *ConditionsCheck `json:"conditions,omitempty"`
	Warnings   []string         `json:"warnings,omitempty"`
}

// NewMulti compares the variants, the first as the reference. It warns when they mix
// concurrency and rate levels or share no level.
func NewMulti(vs []Variant) *Multi {
	m := &Multi{Variants: vs, Conditions: conditionsOfMulti(vs)}
	if len(vs) == 0 {
		return m
	}
	m.Rate = vs[0].Rate
	counts := map[float64]int{}
	for _, v := range vs {
		if v.Rate != m.Rate {
			m.Warnings = append(m.Warnings, fmt.Sprintf("%s is %s but %s is %s: levels are not comparable",
				v.Name, kind(v.Rate), vs[0].Name, kind(m.Rate)))
		}
		seen := map[float64]bool{}
		for _, l := range v.Levels {
			if !seen[l.Value] {
				seen[l.Value] = true
				counts[l.Value]++
			}
		}
	}
	for val, n := range counts {
		if n == len(vs) {
			m.Common = append(m.Common, val)
		}
	}
	slices.Sort(m.Common)
	if len(m.Common) == 0 && len(vs) > 1 {
		m.Warnings = append(m.Warnings, "the runs share no level: latencies cannot be compared level by level")
	}
	m.shareNative()
	return m
}

// shareNative gives every variant swept with the first one's plan (same kind and levels)
// the first one's "% of native": a --vs-native sweep runs once, beside the first variant.
func (m *Multi) shareNative() {
	ref := m.Variants[0]
	if ref.NativeQPS <= 0 {
		return
	}
	samePlan := func(v Variant) bool {
		return v.Rate == ref.Rate && slices.EqualFunc(v.Levels, ref.Levels, func(a, b sweep.Level) bool { return a.Value == b.Value })
	}
	all := true
	for i := range m.Variants[1:] {
		v := &m.Variants[i+1]
		switch {
		case v.NativeQPS > 0: // measured its own
		case samePlan(*v):
			v.NativeQPS = ref.NativeQPS
		default:
			all = false
		}
	}
	who := "every variant"
	if !all {
		who = "the variants with its plan"
	}
	m.Notes = append(m.Notes, fmt.Sprintf("%% of native: %s against plain net/http's peak of %.0f req/s, swept once with %s's plan", who, ref.NativeQPS, ref.Name))
}

// At returns variant i's level of value val, or nil.
func (m *Multi) At(i int, val float64) *sweep.Level {
	for k := range m.Variants[i].Levels {
		if l := &m.Variants[i].Levels[k]; l.Value == val {
			return l
		}
	}
	return nil
}

// PeakQPS is variant i's highest QPS (NaN without levels).
func (m *Multi) PeakQPS(i int) float64 {
	if p := m.Variants[i].Peak(); p != nil {
		return p.QPS
	}
	return math.NaN()
}

// CPUPerRequest is the target's CPU time per request at variant i's peak (target CPU over
// peak QPS), -1 when the target's CPU was not sampled. On a shared machine it moves far
// less than QPS: the cost of a request, whatever else the machine does.
func (m *Multi) CPUPerRequest(i int) time.Duration {
	q := m.PeakQPS(i)
	if m.Variants[i].TargetCPU <= 0 || !(q > 0) {
		return -1
	}
	return time.Duration(m.Variants[i].TargetCPU / q * float64(time.Second))
}

// PctOfFirst is variant i's peak QPS in percent of the first variant's.
func (m *Multi) PctOfFirst(i int) float64 { return 100 * ratio(m.PeakQPS(i), m.PeakQPS(0)) }

// PctOfNative is variant i's peak QPS in percent of plain net/http's on the same plan, NaN
// when the run has no --vs-native measurement.
func (m *Multi) PctOfNative(i int) float64 {
	if m.Variants[i].NativeQPS <= 0 {
		return math.NaN()
	}
	return 100 * ratio(m.PeakQPS(i), m.Variants[i].NativeQPS)
}

// ErrorPct is variant i's share of failed attempts over all its levels, in percent.
func (m *Multi) ErrorPct(i int) float64 {
	var att, errs int64
	for _, l := range m.Variants[i].Levels {
		att += l.Attempts
		errs += l.Errors.Total()
	}
	if att == 0 {
		return math.NaN()
	}
	return 100 * float64(errs) / float64(att)
}

// Headline names the best variant and how it compares with the first: by peak QPS, unless a
// run's machine was busy (other processes move peaks by tens of percent) and every variant
// has its target's CPU per request, which moves least: then by the least CPU per request,
// saying when the peaks rank another variant first.
func (m *Multi) Headline() string {
	if len(m.Variants) == 0 {
		return "compare: no runs"
	}
	best := 0
	for i := range m.Variants {
		if m.PeakQPS(i) > m.PeakQPS(best) {
			best = i
		}
	}
	byQPS := fmt.Sprintf("%s has the highest peak: %.0f req/s", m.Variants[best].Name, m.PeakQPS(best))
	if best != 0 {
		byQPS += fmt.Sprintf(", %.1f%% of %s's %.0f req/s", m.PctOfFirst(best), m.Variants[0].Name, m.PeakQPS(0))
	}
	busy := m.busy()
	cheap, ok := m.cheapest()
	switch {
	case busy == "":
		return byQPS
	case !ok:
		return byQPS + fmt.Sprintf(" (on a busy machine, %s: peaks move with the other processes; give the targets' pids to rank by CPU per request)", busy)
	}
	h := fmt.Sprintf("%s costs the least target CPU per request: %s", m.Variants[cheap].Name, microseconds(m.CPUPerRequest(cheap)))
	if cheap != 0 {
		h += fmt.Sprintf(", %.1f%% of %s's %s", 100*ratio(float64(m.CPUPerRequest(cheap)), float64(m.CPUPerRequest(0))),
			m.Variants[0].Name, microseconds(m.CPUPerRequest(0)))
	}
	h += fmt.Sprintf(" (ranked by CPU per request: on a busy machine, %s, peaks move with the other processes)", busy)
	if best != cheap {
		h += fmt.Sprintf("; the peaks disagree: %s", byQPS)
	}
	return h
}

// busy says which run's machine was busy and why ("" when none was).
func (m *Multi) busy() string {
	for _, v := range m.Variants {
		if why := v.Conditions.Busy(conditions.DefaultThresholds); why != "" {
			return v.Name + "'s " + why
		}
	}
	return ""
}

// cheapest is the variant of least CPU per request; false unless every variant has one.
func (m *Multi) cheapest() (int, bool) {
	best := 0
	for i := range m.Variants {
		d := m.CPUPerRequest(i)
		if d < 0 {
			return 0, false
		}
		if d < m.CPUPerRequest(best) {
			best = i
		}
	}
	return best, true
}

// microseconds shows a CPU time per request as the table does: "44.76us", "1.00ms".
func microseconds(d time.Duration) string {
	us := float64(d) / float64(time.Microsecond)
	if us >= 1000 {
		return strconv.FormatFloat(us/1000, 'f', 2, 64) + "ms"
	}
	return strconv.FormatFloat(us, 'f', 2, 64) + "us"
}
