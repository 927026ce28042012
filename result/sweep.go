package result

import (
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/sweep"
)

// Sweep is the plan and the analysis of a sweep: filled in by the sweep command, saved after
// every level. The measured duration and the rest of the load are the run's Load.
type Sweep struct {
	Levels []int            `json:"levels,omitempty"` // concurrency levels of the plan
	Rates  []float64        `json:"rates,omitempty"`  // rate levels of the plan (open loop)
	Warmup measure.Duration `json:"warmup,omitempty"` // unmeasured load before each level
	Count  int              `json:"count,omitempty"`  // measured runs per level (0 means 1)

	Objective sweep.Objective `json:"objective"` // what a level must meet to count toward the knee
	Rules     sweep.Rules     `json:"rules"`     // the stop rules in force

	// Points has one entry per level measured, in plan order: the median of its runs.
	Points []sweep.Point `json:"points"`
	// Peak and Knee index Points: the highest QPS and the largest level meeting the
	// objective; -1 when there is none.
	Peak int `json:"peak"`
	Knee int `json:"knee"`
	// Stop says why the sweep ended before its last level; nil when it ran them all.
	Stop *sweep.Stop `json:"stop,omitempty"`
	// VsNative compares the peak with the same plan against plain net/http (Run.Native).
	VsNative *sweep.Comparison `json:"vs_native,omitempty"`
}

// NewSweep returns the sweep record of plan, before any level is measured.
func NewSweep(plan sweep.Plan, obj sweep.Objective, rules sweep.Rules) *Sweep {
	return &Sweep{Levels: plan.Levels, Rates: plan.Rates, Warmup: plan.Warmup, Count: plan.Count,
		Objective: obj, Rules: rules, Peak: -1, Knee: -1}
}

// Plan returns the sweep's plan.
func (s *Sweep) Plan() sweep.Plan {
	return sweep.Plan{Levels: s.Levels, Rates: s.Rates, Warmup: s.Warmup, Count: s.Count}
}

// Analyze recomputes Points, Peak and Knee from steps and returns the analysis' warnings.
func (s *Sweep) Analyze(steps []*measure.Step) []string {
	s.Points = sweep.Points(s.Plan(), steps)
	a := sweep.Analyze(s.Points, s.Objective)
	s.Peak, s.Knee = a.Peak, a.Knee
	return a.Warnings
}

// PeakPoint is the level with the highest QPS, or nil.
func (s *Sweep) PeakPoint() *sweep.Point {
	if s == nil {
		return nil
	}
	return s.point(s.Peak)
}

// KneePoint is the largest level meeting the objective, or nil.
func (s *Sweep) KneePoint() *sweep.Point {
	if s == nil {
		return nil
	}
	return s.point(s.Knee)
}

func (s *Sweep) point(i int) *sweep.Point {
	if i < 0 || i >= len(s.Points) {
		return nil
	}
	return &s.Points[i]
}

// Headlines are the sweep's summary lines: the peak, the knee, then the comparison with
// plain net/http when there is one.
func (s *Sweep) Headlines() []string {
	out := []string{sweep.PeakSummary(s.Points, s.Peak), sweep.KneeSummary(s.Points, s.Knee, s.Objective)}
	if s.VsNative != nil {
		out = append(out, s.VsNative.String())
	}
	return out
}
