package result

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/apiperf/apiperf/internal/testenv"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/sweep"
)

// histograms fills and mutates histograms, which keep their samples unexported.
func histograms(v reflect.Value, seed int) bool {
	if v.Type() != reflect.TypeFor[*measure.Histogram]() {
		return false
	}
	if v.IsNil() {
		v.Set(reflect.ValueOf(measure.NewHistogram()))
	}
	v.Interface().(*measure.Histogram).RecordN(time.Duration(seed+1)*time.Millisecond, int64(seed+1))
	return true
}

// filledRun is one generator's run with every field of its steps set by reflection (a field
// added to a step later is set too), two steps of level c=2 and, from the second host, one
// of c=8 that only it has; the same seed makes a deeply equal run.
func filledRun(seed int, host string) *Run {
	step := func(label string, seed int) *measure.Step {
		s := &measure.Step{}
		testenv.Fill(s, seed, histograms)
		s.Label, s.Rep = label, 0
		for i := range s.ServerTiming.Metrics { // derived from the histogram, as merging makes it
			s.ServerTiming.Metrics[i].Summary = measure.Summarize(s.ServerTiming.Metrics[i].Histogram)
		}
		return s
	}
	r := &Run{Version: Version, Kind: "sweep", Host: host, Labels: map[string]string{"team": "api"},
		Start: time.Unix(1_700_000_000+int64(seed), 0).UTC(), Warnings: []string{"w"},
		Steps: []*measure.Step{step("c=2", seed)},
		Sweep: sweep.NewRecord(sweep.Plan{Levels: []int{2, 8}}, sweep.Objective{}, sweep.Rules{})}
	r.Scenario.URL = "http://127.0.0.1:8080/"
	r.Load.Connections, r.Load.Threads = 2, 1
	r.End = r.Start.Add(time.Minute)
	if host == "gen-b" {
		r.Steps = append(r.Steps, step("c=8", seed+1))
	}
	r.Sweep.Analyze(r.Steps)
	return r
}

// TestMergeNeverChangesItsInputs: merging runs leaves every input as it was, and the merged
// run shares no step memory with them (changing all of its steps leaves the inputs as they were).
func TestMergeNeverChangesItsInputs(t *testing.T) {
	a, b := filledRun(1, "gen-a"), filledRun(40, "gen-b")
	out, err := Merge([]*Run{a, b})
	if err != nil {
		t.Fatalf("Merge: %v", err)
	}
	if len(out.Steps) != 2 || out.Steps[0].Attempts != a.Steps[0].Attempts+b.Steps[0].Attempts {
		t.Fatalf("Merge made %d steps, the first with %d attempts; want 2 steps, %d + %d attempts",
			len(out.Steps), out.Steps[0].Attempts, a.Steps[0].Attempts, b.Steps[0].Attempts)
	}
	check := func(when string) {
		t.Helper()
		if !reflect.DeepEqual(a, filledRun(1, "gen-a")) {
			t.Errorf("%s changed the first input run: fields %v", when, changedFields(a, filledRun(1, "gen-a")))
		}
		if !reflect.DeepEqual(b, filledRun(40, "gen-b")) {
			t.Errorf("%s changed the second input run: fields %v", when, changedFields(b, filledRun(40, "gen-b")))
		}
	}
	check("Merge")
	for _, s := range out.Steps {
		testenv.Mutate(s, histograms)
	}
	check("changing the merged run's steps")
}

// changedFields names the fields of got that are not deeply equal to want's, and of its
// first step's when they differ.
func changedFields(got, want *Run) []string {
	var out []string
	diff := func(prefix string, g, w reflect.Value) {
		for i := range g.NumField() {
			if !reflect.DeepEqual(g.Field(i).Interface(), w.Field(i).Interface()) {
				out = append(out, prefix+g.Type().Field(i).Name)
			}
		}
	}
	diff("", reflect.ValueOf(got).Elem(), reflect.ValueOf(want).Elem())
	for i := range min(len(got.Steps), len(want.Steps)) {
		diff(fmt.Sprintf("Steps[%d].", i), reflect.ValueOf(got.Steps[i]).Elem(), reflect.ValueOf(want.Steps[i]).Elem())
	}
	return out
}
