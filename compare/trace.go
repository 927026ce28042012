package compare

import (
	"fmt"
	"time"

	"github.com/apiperf/apiperf/exectrace"
	"github.com/apiperf/apiperf/profcap"
	"github.com/apiperf/apiperf/result"
)

// TraceDiff puts the execution trace summaries of two runs side by side: what a GOGC
// change or a sync.Pool did, e.g. "GC cycles per second 41 -> 6".
type TraceDiff struct {
	// LevelA and LevelB are the labels of the traced steps compared.
	LevelA string     `json:"level_a"`
	LevelB string     `json:"level_b"`
	Rows   []TraceRow `json:"rows"`
}

// TraceRow is one figure of the summaries, one value per run.
type TraceRow struct {
	Name   string    `json:"name"`
	Unit   TraceUnit `json:"unit"`
	Values []float64 `json:"values"`
}

// TraceUnit says how a TraceRow's values are written.
type TraceUnit string

// Units of TraceRow.
const (
	UnitRate     TraceUnit = "per second"
	UnitDuration TraceUnit = "ns"
	UnitPct      TraceUnit = "%"
	UnitCount    TraceUnit = "count"
	UnitMean     TraceUnit = "mean" // an average of counts, two decimals
)

// Format writes one value of the row: 41.0, 1.2ms, 12%, 1.4.
func (r TraceRow) Format(v float64) string {
	switch r.Unit {
	case UnitDuration:
		return exectrace.Short(time.Duration(v))
	case UnitPct:
		return fmt.Sprintf("%.1f%%", v)
	case UnitCount:
		return fmt.Sprintf("%.0f", v)
	case UnitMean:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// TraceRows tabulates summaries (one per run, nil when a run has none) figure by figure.
func TraceRows(sums []*exectrace.Summary) []TraceRow {
	figures := []struct {
		name string
		unit TraceUnit
		f    func(*exectrace.Summary) float64
	}{
		{"GC cycles per second", UnitRate, (*exectrace.Summary).GCPerSecond},
		{"GC stop-the-world total", UnitDuration, func(s *exectrace.Summary) float64 { return float64(s.STWTotal) }},
		{"GC stop-the-world max", UnitDuration, func(s *exectrace.Summary) float64 { return float64(s.STWMax) }},
		{"GC CPU share", UnitPct, (*exectrace.Summary).GCCPUPct},
		{"GC mark assist share", UnitPct, (*exectrace.Summary).AssistPct},
		{"scheduler latency p50", UnitDuration, func(s *exectrace.Summary) float64 { return float64(s.Sched.P50) }},
		{"scheduler latency p99", UnitDuration, func(s *exectrace.Summary) float64 { return float64(s.Sched.P99) }},
		{"scheduler latency max", UnitDuration, func(s *exectrace.Summary) float64 { return float64(s.Sched.Max) }},
		{"GOMAXPROCS", UnitCount, func(s *exectrace.Summary) float64 { return float64(s.GOMAXPROCS) }},
		{"busy Ps", UnitMean, func(s *exectrace.Summary) float64 { return s.BusyPs }},
	}
	var rows []TraceRow
	for _, f := range figures {
		row := TraceRow{Name: f.name, Unit: f.unit, Values: make([]float64, len(sums))}
		for i, s := range sums {
			if s != nil {
				row.Values[i] = f.f(s)
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// DiffTraces compares the trace summaries of a and b: at the same level when both traced
// one (the last such level), else each run's peak or last traced step. Nil when either
// run has no trace.
func DiffTraces(a, b *result.Run) *TraceDiff {
	ta, tb := a.Target.Traced(), b.Target.Traced()
	if len(ta) == 0 || len(tb) == 0 {
		return nil
	}
	sa, sb := PeakTrace(a), PeakTrace(b)
	for i := len(ta) - 1; i >= 0; i-- {
		if j := indexLabel(tb, ta[i].Label); j >= 0 {
			sa, sb = ta[i], tb[j]
			break
		}
	}
	return &TraceDiff{LevelA: sa.Label, LevelB: sb.Label,
		Rows: TraceRows([]*exectrace.Summary{sa.Trace.Summary, sb.Trace.Summary})}
}

// PeakTrace is r's traced step at its peak level, else its last traced step; nil when
// r has no trace.
func PeakTrace(r *result.Run) *profcap.StepRecord {
	traced := r.Target.Traced()
	if len(traced) == 0 {
		return nil
	}
	if p := r.Levels().PeakLevel(); p != nil {
		if i := indexLabel(traced, p.Label); i >= 0 {
			return traced[i]
		}
	}
	return traced[len(traced)-1]
}
