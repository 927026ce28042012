package profcap

import (
	"context"
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
)

func TestLevelNumber(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want float64
	}{
		{"c=50", 50},        // a concurrency label
		{"rate=100/s", 100}, // a rate label
		{"rate=2.5/s", 2.5}, // a fractional rate
		{"50", 50},          // a bare number, as --profile-levels takes it
		{"knee", -1},        // not a level
		{"c=-3", -1},        // not a level either
		{"rate=100", -1},    // a rate without /s is not a label
	} {
		if got := LevelNumber(tt.in); got != tt.want {
			t.Errorf("LevelNumber(%q) = %v; want %v", tt.in, got, tt.want)
		}
	}
}

func TestChooseSteps(t *testing.T) {
	step := func(label string, requests int64) *measure.Step {
		return &measure.Step{Label: label, Requests: requests, Elapsed: measure.Duration(time.Second)}
	}
	steps := []*measure.Step{step("c=10", 100), step("c=50", 900), step("c=100", 500)}
	tests := []struct {
		levels []string
		want   string // which steps are kept, by label
	}{
		{[]string{LevelsPeak}, "c=50"},                   // the highest QPS
		{[]string{LevelsLast}, "c=100"},                  // the last one run
		{[]string{LevelsPeak, LevelsLast}, "c=50 c=100"}, // the default
		{[]string{"10"}, "c=10"},                         // a bare number
		{[]string{"c=100"}, "c=100"},                     // a label
		{[]string{LevelsAll}, "c=10 c=50 c=100"},         // every step
	}
	for _, tt := range tests {
		keep := chooseSteps(steps, tt.levels)
		var got []string
		for _, s := range steps {
			if keep(s) {
				got = append(got, s.Label)
			}
		}
		if g := join(got); g != tt.want {
			t.Errorf("chooseSteps(%v) keeps %q; want %q", tt.levels, g, tt.want)
		}
	}
	if d := stepDir("rate=2.5/s", 1); d != "rate=2.5_s-rep1" {
		t.Errorf("stepDir = %q; want rate=2.5_s-rep1", d)
	}
}

// TestSessionDisabled: a session with nothing to capture begins nothing and records nothing.
func TestSessionDisabled(t *testing.T) {
	var s Session
	if s.Enabled() || s.Begin(context.Background(), "c=1", 0, time.Second) != nil || s.Finish(nil, t.TempDir()) != nil {
		t.Error("an empty session captured something")
	}
	(*StepCapture)(nil).Wait() // waiting on no capture is a no-op
}

func join(s []string) string {
	out := ""
	for i, v := range s {
		if i > 0 {
			out += " "
		}
		out += v
	}
	return out
}

func TestChooseStepsPeakIsTheTablesPeak(t *testing.T) {
	step := func(label string, rep int, requests int64) *measure.Step {
		return &measure.Step{Label: label, Rep: rep, Requests: requests, Elapsed: measure.Duration(time.Second)}
	}
	// c=10's first repetition is the fastest step, but c=10's median (100) is below c=50's
	// single 500: the table's peak is c=50, so its profiles are the ones kept.
	steps := []*measure.Step{step("c=10", 1, 1000), step("c=10", 2, 100), step("c=10", 3, 100), step("c=50", 1, 500)}
	keep := chooseSteps(steps, []string{LevelsPeak})
	for _, s := range steps {
		if want := s.Label == "c=50"; keep(s) != want {
			t.Errorf("chooseSteps(peak) keeps %s rep %d = %v; want %v", s.Label, s.Rep, keep(s), want)
		}
	}
}
