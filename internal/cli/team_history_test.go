package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiperf/apiperf/store/storetest"
	"github.com/apiperf/apiperf/target"
)

// TestTeamHistory: two "runners" (two directories with nothing in common but the --db
// value) share one history: runner 1 records six runs of main (the newest the baseline, five its noise history), runner 2 one of a branch;
// runner 2's gate finds main's runs as its baseline and learns its noise band from them,
// and `history trend` lists all six from either side. On SQLite and, where .ci/run provides
// one, on PostgreSQL.
func TestTeamHistory(t *testing.T) {
	url := startTarget(t, target.Config{}) + "/healthz"
	for name, newDB := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			db := newDB(t)
			one, two := t.TempDir(), t.TempDir()
			load := func(dir, branch string, i int) {
				t.Helper()
				code, _, stderr := runCLI(t, "run", "-q", "-c2", "-t1", "-d200ms", "--db", db, "--label", "branch="+branch,
					"-o", filepath.Join(dir, fmt.Sprintf("run%d.json", i)), url)
				if code != ExitOK || strings.Contains(stderr, "recording history") {
					t.Fatalf("run on %s = exit %d: %s", branch, code, stderr)
				}
			}
			for i := range 6 {
				load(one, "main", i)
			}
			load(two, "feature", 0)
			code, stdout, stderr := runCLI(t, "gate", "--db", db, "--baseline", "label=branch:main", "--current", "label=branch:feature", "--json", "-")
			if code == ExitUsage || strings.Count(stdout, `"noise_band"`) < 3 || !strings.Contains(stdout, `"runs": 6`) || strings.Contains(stdout+stderr, "not learned") {
				t.Errorf("runner 2's gate against main = exit %d\nstdout:\n%s\nstderr:\n%s\nwant main's newest run as baseline and noise bands learned from its six runs", code, stdout, stderr)
			}
			code, stdout, stderr = runCLI(t, "history", "--db", db)
			if code != ExitOK || strings.Count(stdout, "branch=main") != 6 || strings.Count(stdout, "branch=feature") != 1 {
				t.Errorf("history on the shared database = exit %d\n%s%s\nwant six runs of main and one of feature", code, stdout, stderr)
			}
			for _, dir := range []string{one, two} {
				code, stdout, stderr = runCLI(t, "history", "trend", "--metric", "qps", "--db", db, "--dir", dir)
				if code != ExitOK || !strings.Contains(stdout, "over 7 runs") {
					t.Errorf("history trend = exit %d\n%s%s\nwant all seven runs", code, stdout, stderr)
				}
			}
		})
	}
}
