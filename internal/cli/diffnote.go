package cli

import (
	"fmt"
	"strings"

	"github.com/apiperf/apiperf/store"
)

// noteExperiments says on stderr when runs A and B measured different experiments (URL,
// method, scenario or load shape), and returns the note for diff.html. A diff is often meant
// to compare two targets (a framework against plain net/http), so this is a note, not a
// refusal as in gate; but never a surprise.
func noteExperiments(e *env, pathA, pathB string) string {
	var ids [2]store.Identity
	for i, p := range []string{pathA, pathB} {
		if ok, err := isRunFile(p); err != nil || !ok {
			return "" // a classic .dat file knows no URL
		}
		r, err := loadRun(p)
		if err != nil {
			return ""
		}
		ids[i] = store.IdentityOf(r)
	}
	d := ids[0].Differences(ids[1])
	if len(d) == 0 {
		return ""
	}
	note := "B is another experiment than A: " + strings.Join(d, "; ")
	fmt.Fprintf(e.stderr, "apiperf: note: %s\n", note)
	return note
}
