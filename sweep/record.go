package sweep

import "github.com/apiperf/apiperf/measure"

// Record is what a sweep (or a capacity search, seen as a sweep of its probed rates) saves
// in run.json: its plan, objective and rules, the measured levels and their analysis. It is
// refreshed after every step, so an interrupted sweep keeps what it measured.
type Record struct {
	Plan      Plan      `json:"plan"`
	Objective Objective `json:"objective"` // what a level must meet to count toward the knee
	Rules     Rules     `json:"rules"`     // the stop rules in force
	// Levels has one entry per level measured, in ascending order, reduced by Reduce.
	Levels []Level `json:"levels"`
	// Peak, Knee and Limit index Levels (see Analysis); -1 when there is none.
	Peak  int `json:"peak"`
	Knee  int `json:"knee"`
	Limit int `json:"limit"`
	// Stop says why the sweep ended before its last level; nil when it ran them all.
	Stop *Stop `json:"stop,omitempty"`
	// VsNative compares the peak with the same plan against plain net/http (--vs-native).
	VsNative *Comparison `json:"vs_native,omitempty"`
	// Search says a capacity search chose the levels (its probed rates), not a plan: that
	// its peak is at the largest rate probed says nothing of where the target stops.
	Search bool `json:"search,omitempty"`
}

// NewRecord returns the record of plan, before any level is measured.
func NewRecord(plan Plan, obj Objective, rules Rules) *Record {
	return &Record{Plan: plan, Objective: obj, Rules: rules, Peak: -1, Knee: -1, Limit: -1}
}

// DefaultRecord reduces and analyzes steps that were not run as a sweep (a plain run, a
// merged or imported run) under the default objective.
func DefaultRecord(steps []*measure.Step) *Record {
	obj, _ := ParseObjective(DefaultObjective)
	r := NewRecord(Plan{}, obj, Rules{})
	r.Analyze(steps)
	return r
}

// Analyze recomputes Levels, Peak, Knee and Limit from steps and returns the analysis'
// warnings.
func (r *Record) Analyze(steps []*measure.Step) []string {
	r.Levels = Levels(steps)
	a := analyze(r.Levels, r.Objective, !r.Search)
	r.Peak, r.Knee, r.Limit = a.Peak, a.Knee, a.Limit
	return a.Warnings
}

// Analysis returns the indexes of the analysis.
func (r *Record) Analysis() Analysis {
	return Analysis{Peak: r.Peak, Knee: r.Knee, Limit: r.Limit}
}

// PeakLevel is the level with the highest QPS, or nil.
func (r *Record) PeakLevel() *Level { return r.level(r.Peak) }

// KneeLevel is the knee (see Analysis), or nil.
func (r *Record) KneeLevel() *Level { return r.level(r.Knee) }

func (r *Record) level(i int) *Level {
	if r == nil || i < 0 || i >= len(r.Levels) {
		return nil
	}
	return &r.Levels[i]
}

// Headlines are the summary lines: the peak, the knee, the largest level meeting the
// objective when it lies beyond the peak, then the comparison with plain net/http.
func (r *Record) Headlines() []string {
	a := r.Analysis()
	out := []string{PeakSummary(r.Levels, r.Peak), KneeSummary(r.Levels, a, r.Objective)}
	if s := LimitSummary(r.Levels, a, r.Objective); s != "" {
		out = append(out, s)
	}
	if r.VsNative != nil {
		out = append(out, r.VsNative.String())
	}
	return out
}
