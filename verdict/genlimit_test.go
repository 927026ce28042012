package verdict

import (
	"slices"
	"strings"
	"testing"

	"github.com/apiperf/apiperf/measure"
)

// TestGeneratorLimitedIsNotTheTarget proves a level that hit apiperf's own limit is named as
// such and is no evidence against the target: its connect failures (as an older apiperf
// counted them) do not make an errors claim, and the claims about the target see only the
// other levels.
func TestGeneratorLimitedIsNotTheTarget(t *testing.T) {
	levels := closed([3]float64{500, 50000, 10}, [3]float64{1000, 90000, 11}, [3]float64{1500, 90500, 11})
	levels[2].Errors = measure.Errors{Connect: 160000}
	levels[2].Attempts += 160000
	levels[2].GeneratorLimit = "local ports exhausted (EADDRNOTAVAIL) at 1000 of 1500 connections; not the target's failure; fix: use --source"
	levels[2].GeneratorFix = "use --source"
	v := Judge(Input{Levels: levels, Peak: 1})
	if got := v.Kinds(); !slices.Equal(got, []Kind{GeneratorLimited}) {
		t.Fatalf("Judge kinds %v; want only %v (claims %+v)", got, GeneratorLimited, v.Claims)
	}
	c := v.Claims[0]
	if c.Level != levels[2].Label || c.Confidence != High || c.Fix != "use --source" || !strings.Contains(strings.Join(c.Evidence, "\n"), "at "+levels[2].Label+": local ports exhausted") {
		t.Errorf("claim %+v; want c=1500, high, the limit as evidence and its fix", c)
	}

	// Without the mark the same numbers blame the target: the test above is not vacuous.
	levels[2].GeneratorLimit = ""
	if v := Judge(Input{Levels: levels, Peak: 1}); !v.Has(ErrorsStart) {
		t.Errorf("unmarked: kinds %v; want an errors claim", v.Kinds())
	}
}

func TestTargetLevelsReindexesThePeak(t *testing.T) {
	levels := closed([3]float64{1, 10, 1}, [3]float64{2, 20, 1}, [3]float64{3, 30, 1})
	levels[0].GeneratorLimit = "x"
	out := targetLevels(Input{Levels: levels, Peak: 2})
	if len(out.Levels) != 2 || out.Peak != 1 || out.Levels[out.Peak].Label != "c=3" {
		t.Errorf("targetLevels: %d levels, peak %d; want 2 levels, peak 1 (c=3)", len(out.Levels), out.Peak)
	}
}
