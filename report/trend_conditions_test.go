package report

import (
	"reflect"
	"testing"
	"time"

	"github.com/apiperf/apiperf/conditions"
)

// A trend marks the runs whose conditions differ from the run before: on its chart, and
// in what ConditionChanges lists.
func TestTrendConditionMarks(t *testing.T) {
	on := func(cpu string) *conditions.Record {
		return &conditions.Record{Generator: conditions.Generator{CPUModel: cpu, CPUs: 2, Kernel: "6.1.0", GOMAXPROCS: 2}}
	}
	var runs []TrendRun
	for i, rec := range []*conditions.Record{on("Xeon"), on("Xeon"), on("EPYC"), nil} {
		runs = append(runs, TrendRun{ID: int64(i + 1), Start: time.Date(2026, 1, 1, i, 0, 0, 0, time.UTC), Values: map[string]float64{"c=10": 100}, Conditions: rec})
	}
	tr := Trend{Metric: "qps", Runs: runs}
	want := []ConditionChange{{Run: 2, Fields: []string{"CPU model"}}, {Run: 3, Fields: []string{"conditions known on one side only"}}}
	if got := tr.ConditionChanges(); !reflect.DeepEqual(got, want) {
		t.Errorf("ConditionChanges = %+v, want %+v", got, want)
	}
	marks := tr.Chart().Marks
	if len(marks) != 2 || marks[0].At != 2 || marks[0].Label != "conditions: CPU model" || marks[1].At != 3 {
		t.Errorf("trend chart marks = %+v, want runs 2 and 3 marked", marks)
	}
	if err := tr.Chart().Validate(); err != nil {
		t.Errorf("the marked chart does not validate: %v", err)
	}
}
