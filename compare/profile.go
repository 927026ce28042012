package compare

import (
	"github.com/apiperf/apiperf/profcap"
	"github.com/apiperf/apiperf/result"
)

// DefaultProfileRows is how many functions ProfileDiff keeps.
const DefaultProfileRows = 10

// ProfileDiff is how the target's CPU profile changed from run A to run B: the functions
// whose share of CPU grew or shrank the most, in percentage points.
type ProfileDiff struct {
	// LevelA and LevelB are the labels of the profiled steps compared.
	LevelA string `json:"level_a"`
	LevelB string `json:"level_b"`
	// Deltas are the largest changes first (see profcap.DiffTop), at most the asked rows.
	Deltas []profcap.Delta `json:"deltas"`
}

// DiffProfiles compares the CPU profiles of a and b: at the same level when both
// profiled one (the last such level), else each run's last profiled step. It returns
// nil when either run has no CPU profile. rows <= 0 means DefaultProfileRows.
func DiffProfiles(a, b *result.Run, rows int) *ProfileDiff {
	if rows <= 0 {
		rows = DefaultProfileRows
	}
	pa, pb := cpuSteps(a), cpuSteps(b)
	if len(pa) == 0 || len(pb) == 0 {
		return nil
	}
	sa, sb := pa[len(pa)-1], pb[len(pb)-1]
	for i := len(pa) - 1; i >= 0; i-- {
		if j := indexLabel(pb, pa[i].Label); j >= 0 {
			sa, sb = pa[i], pb[j]
			break
		}
	}
	ta, tb := *sa.Profiles.CPU, *sb.Profiles.CPU
	var kept []profcap.Delta
	for _, d := range profcap.DiffTop(ta, tb) {
		// A function missing from a table cut above MaxUnlistedPct may just be below its cut.
		if (listed(ta, d.Function) || floor(ta) <= MaxUnlistedPct) && (listed(tb, d.Function) || floor(tb) <= MaxUnlistedPct) {
			kept = append(kept, d)
		}
	}
	return &ProfileDiff{LevelA: sa.Label, LevelB: sb.Label, Deltas: kept[:min(rows, len(kept))]}
}

// MaxUnlistedPct is the largest CPU share a function left out of a top table may have for
// DiffProfiles to count it as absent (0%); above, its share there is unknown and it is skipped.
const MaxUnlistedPct = profcap.MaxUnlistedPct

func listed(t profcap.TopTable, fn string) bool {
	for _, e := range t.ByCum {
		if e.Function == fn {
			return true
		}
	}
	for _, e := range t.ByFlat {
		if e.Function == fn {
			return true
		}
	}
	return false
}

// floor is the smallest cumulative share a table lists: functions below it were cut.
func floor(t profcap.TopTable) float64 {
	if len(t.ByCum) == 0 {
		return 0
	}
	return t.ByCum[len(t.ByCum)-1].CumPct
}

func cpuSteps(r *result.Run) []*profcap.StepRecord {
	if r == nil {
		return nil
	}
	var out []*profcap.StepRecord
	for _, s := range r.Target.Profiled() {
		if s.Profiles.CPU != nil {
			out = append(out, s)
		}
	}
	return out
}

func indexLabel(steps []*profcap.StepRecord, label string) int {
	for i, s := range steps {
		if s.Label == label {
			return i
		}
	}
	return -1
}
