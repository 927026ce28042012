package report

import (
	"strings"

	"github.com/apiperf/apiperf/conditions"
	"github.com/apiperf/apiperf/report/chart"
)

// ConditionChange is a run of a trend measured on other conditions than the run before
// it: another machine for the generator, another build of the target.
type ConditionChange struct {
	Run    int      `json:"run"`    // index into the trend's Runs
	Fields []string `json:"fields"` // what changed (conditions.Changed)
}

// ConditionChanges lists the runs whose conditions differ from the previous run's.
func (t Trend) ConditionChanges() []ConditionChange {
	var out []ConditionChange
	for i := 1; i < len(t.Runs); i++ {
		if f := conditions.Changed(t.Runs[i-1].Conditions, t.Runs[i].Conditions); len(f) > 0 {
			out = append(out, ConditionChange{Run: i, Fields: f})
		}
	}
	return out
}

// conditionMarks marks, on the trend chart, each run where the conditions changed.
func (t Trend) conditionMarks() []chart.Mark {
	var out []chart.Mark
	for _, c := range t.ConditionChanges() {
		out = append(out, chart.Mark{At: float64(c.Run), Label: "conditions: " + strings.Join(c.Fields, ", ")})
	}
	return out
}
