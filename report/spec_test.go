package report

import (
	"fmt"
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/sweep"
)

// The charts of a sweep mark its peak and knee; the success chart zooms to the data with
// 100% as a reference line; the Spec names the levels swept, not the -c of the command line.
func TestChartsMarkPeakAndKnee(t *testing.T) {
	r := synthSweep()
	rec := r.Levels()
	charts := runCharts(r, rec)
	want := fmt.Sprint(levelMarks(rec))
	if len(levelMarks(rec)) == 0 {
		t.Fatalf("levelMarks of a 3-level sweep (peak %d, knee %d) = none", rec.Peak, rec.Knee)
	}
	for _, c := range charts {
		if got := fmt.Sprint(c.chart.Marks); got != want {
			t.Errorf("%s chart marks %s; want %s", c.suffix, got, want)
		}
		if err := c.chart.Validate(); err != nil {
			t.Errorf("%s chart: %v", c.suffix, err)
		}
	}
	for _, tc := range []struct {
		peak, knee int
		want       string
	}{
		{1, 0, `[{0 knee} {1 peak}]`}, // knee before the peak: two marks
		{2, 2, `[{2 peak = knee}]`},   // one level is both: one mark, one label
		{1, -1, `[{1 peak}]`},         // no level met the objective: no knee
		{-1, -1, `[]`},                // nothing measured
	} {
		rec := &sweep.Record{Levels: make([]sweep.Level, 3), Peak: tc.peak, Knee: tc.knee}
		if got := fmt.Sprint(levelMarks(rec)); got != tc.want {
			t.Errorf("levelMarks(peak %d, knee %d) = %s; want %s", tc.peak, tc.knee, got, tc.want)
		}
	}

	succ := charts[1].chart
	if len(succ.RefLines) != 1 || succ.RefLines[0].Y != 100 || succ.YRange == nil || succ.YRange.Max <= 100 || succ.YRange.Max > 101 {
		t.Errorf("success chart: reference lines %v, range %v; want 100%% as a line near the top", succ.RefLines, succ.YRange)
	}
	for _, tc := range []struct {
		values   []float64
		min, max float64
	}{
		{[]float64{100, 100}, 99.95, 100.0125}, // a flat 100%: a narrow band around it, not 0-100
		{[]float64{100, 90}, 89.2, 100.2},      // a dip to 90%: from a little below it
		{[]float64{5, 100}, 0, 101.9},          // never below 0
	} {
		r := successRange(tc.values)
		if !near(r.Min, tc.min) || !near(r.Max, tc.max) {
			t.Errorf("successRange(%v) = %v; want [%g, %g]", tc.values, r, tc.min, tc.max)
		}
	}

	if got, want := specLoad(r, rec), "closed loop: 10 to 100 connections in 3 levels (10, 50, 100) on up to 2 threads, 10s per level, timeout 2s"; got != want {
		t.Errorf("specLoad(sweep) = %q; want %q", got, want)
	}
	open := synthSweep()
	open.Sweep.Plan = sweep.Plan{Rates: []float64{500, 1000, 2000}, Warmup: measure.Duration(2 * time.Second), Count: 3}
	if got, want := specLoad(open, open.Sweep), "open loop: 500 to 2000 req/s in 3 levels (500, 1000, 2000) on up to 2 threads, 10s per level after 2s of warmup, 3 repetitions, timeout 2s"; got != want {
		t.Errorf("specLoad(open sweep) = %q; want %q", got, want)
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// The target's metrics timelines mark where each level starts.
func TestMetricsTimelineMarksLevels(t *testing.T) {
	r := withTarget(t)
	_, _, _, _, _, _, marks := metricsTimeline(r)
	if got := fmt.Sprint(marks); got != "[{0 c=50} {15 c=10} {30 c=100}]" {
		t.Errorf("metricsTimeline marks = %s; want each step's label at its start (0, 15 and 30 s)", got)
	}
}
