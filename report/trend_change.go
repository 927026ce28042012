package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/apiperf/apiperf/report/chart"
	"github.com/apiperf/apiperf/stats"
)

// ChangeMethod names how trends find change points, for the page and the terminal.
const ChangeMethod = "E-divisive means (energy distance, permutation test p < 0.01, at least 3 runs a side)"

// TrendChange is a change point of one level's line: from run Run (an index into Runs, ID
// its history id) on, the metric sits at another level.
type TrendChange struct {
	Level  string  `json:"level"`
	Run    int     `json:"run"`
	ID     int64   `json:"id"`
	Before float64 `json:"before"`     // median of the runs since the previous change point
	After  float64 `json:"after"`      // median of the runs up to the next one
	Change float64 `json:"change_pct"` // After against Before, in percent
	P      float64 `json:"p"`
}

// String says where the change is: "c=50: +10.2% at run #15 (1.00 ms -> 1.10 ms)".
func (c TrendChange) String(metric string) string {
	return fmt.Sprintf("%s: %+.1f%% at run #%d (%s -> %s)", c.Level, c.Change, c.ID,
		FormatTrendValue(metric, c.Before), FormatTrendValue(metric, c.After))
}

// FindChanges sets t.Changes: the change points of every level's line (stats.ChangePoints
// over the runs that have the level).
func (t *Trend) FindChanges() {
	t.Changes = nil
	for _, l := range t.levels() {
		var series []float64
		var at []int
		for i, r := range t.Runs {
			if v, ok := r.Values[l]; ok && !math.IsNaN(v) {
				series = append(series, v)
				at = append(at, i)
			}
		}
		for _, cp := range stats.ChangePoints(series) {
			i := at[cp.Index]
			t.Changes = append(t.Changes, TrendChange{Level: l, Run: i, ID: t.Runs[i].ID,
				Before: cp.Before, After: cp.After, Change: cp.Change, P: cp.P})
		}
	}
}

// changeSeries draws, for each level with change points, the median of each segment
// between them as a dashed step line.
func (t Trend) changeSeries() []chart.Series {
	var out []chart.Series
	for _, l := range t.levels() {
		var cps []TrendChange
		for _, c := range t.Changes {
			if c.Level == l {
				cps = append(cps, c)
			}
		}
		if len(cps) == 0 {
			continue
		}
		s := chart.Series{Name: l + " segments (change points)", Dashed: true}
		for i, r := range t.Runs {
			v, ok := r.Values[l]
			if !ok {
				s.Y = append(s.Y, math.NaN())
				continue
			}
			v = cps[0].Before
			for _, c := range cps {
				if i >= c.Run {
					v = c.After
				}
			}
			s.Y = append(s.Y, v)
		}
		out = append(out, s)
	}
	return out
}

// changeCell marks a run where a change point starts: "▲ c=50 +10.2%".
func (t Trend) changeCell(run int) string {
	var parts []string
	for _, c := range t.Changes {
		if c.Run == run {
			parts = append(parts, fmt.Sprintf("%s %+.1f%%", c.Level, c.Change))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "▲ " + strings.Join(parts, ", ")
}
