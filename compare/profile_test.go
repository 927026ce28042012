package compare

import (
	"testing"

	"github.com/apiperf/apiperf/profcap"
	"github.com/apiperf/apiperf/result"
)

// profiledRun is a run whose steps (label -> CPU table rows) were profiled.
func profiledRun(steps map[string][]profcap.TopEntry, order ...string) *result.Run {
	tc := &profcap.Record{}
	for _, label := range order {
		t := &profcap.TopTable{SampleType: "cpu", Unit: "nanoseconds", Total: 100, ByCum: steps[label], ByFlat: steps[label]}
		tc.Steps = append(tc.Steps, profcap.StepRecord{Label: label, Profiles: &profcap.Analysis{CPU: t}})
	}
	return &result.Run{Target: tc}
}

func TestDiffProfiles(t *testing.T) {
	dump := func(pct float64) profcap.TopEntry {
		return profcap.TopEntry{Function: "target.middlewareDump", FlatPct: pct, CumPct: pct}
	}
	serve := profcap.TopEntry{Function: "net/http.(*conn).serve", CumPct: 90}
	tail := profcap.TopEntry{Function: "runtime.tail", CumPct: 0.5} // the table reaches below 1%
	with := profiledRun(map[string][]profcap.TopEntry{"c=10": {serve, dump(30), tail}, "c=50": {serve, dump(41), tail}}, "c=10", "c=50")
	without := profiledRun(map[string][]profcap.TopEntry{"c=10": {serve, tail}}, "c=10")
	tests := []struct {
		name      string
		a, b      *result.Run
		wantLevel string  // compared level of A; "" for no diff
		wantTop   string  // function with the largest change
		wantDelta float64 // its cum delta
	}{
		// the same level exists in both: c=10 is compared, not A's last (c=50).
		{"common level", with, without, "c=10", "target.middlewareDump", -30},
		// reversed: the share grew.
		{"grew", without, with, "c=10", "target.middlewareDump", 30},
		// no common level: each run's last profiled step (c=5 against c=50); serve is not
		// listed in c=5's table, cut at 10%, so only the dump's change is known.
		{"no common level", profiledRun(map[string][]profcap.TopEntry{"c=5": {dump(10)}}, "c=5"), with, "c=5", "target.middlewareDump", 31},
		// B's table is cut at 20%: the dump, missing from it, may be just below the cut and is
		// skipped; main.big, missing from A's table that reaches 0.5%, counts as new.
		{"cut table", with, profiledRun(map[string][]profcap.TopEntry{"c=10": {{Function: "main.big", CumPct: 20}}}, "c=10"), "c=10", "main.big", 20},
		// a run without profiles gives no diff.
		{"unprofiled", with, &result.Run{}, "", "", 0},
	}
	for _, tt := range tests {
		d := DiffProfiles(tt.a, tt.b, 5)
		if tt.wantLevel == "" {
			if d != nil {
				t.Errorf("%s: DiffProfiles = %+v, want nil", tt.name, d)
			}
			continue
		}
		if d == nil || d.LevelA != tt.wantLevel || len(d.Deltas) == 0 {
			t.Fatalf("%s: DiffProfiles = %+v, want level %s with deltas", tt.name, d, tt.wantLevel)
		}
		if top := d.Deltas[0]; top.Function != tt.wantTop || top.CumDelta != tt.wantDelta {
			t.Errorf("%s: top delta %+v, want %s by %.0f points", tt.name, top, tt.wantTop, tt.wantDelta)
		}
	}
}
