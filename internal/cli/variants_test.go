package cli

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apiperf/apiperf/compare"
	"github.com/apiperf/apiperf/result"
)

// variantServer is a loopback target that counts its requests and sleeps delay in each.
func variantServer(t *testing.T, delay time.Duration) (string, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		time.Sleep(delay)
		fmt.Fprint(w, "ok")
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/", &n
}

// TestSweepVariants: `apiperf sweep --variant a=URL --variant b=URL --variant c=URL` sweeps
// each with the same plan (exactly -n per level, counted by each server), saves each run
// directory, and ends with the comparison table and compare.html, the first as reference.
func TestSweepVariants(t *testing.T) {
	dir := t.TempDir()
	urls := map[string]string{}
	counts := map[string]*atomic.Int64{}
	for name, delay := range map[string]time.Duration{"a": 0, "b": 2 * time.Millisecond, "c": 0} {
		urls[name], counts[name] = variantServer(t, delay)
	}
	code, stdout, stderr := runCLI(t, "sweep", "--levels", "2,4", "-n", "200", "--warmup", "0", "--no-stop", "--no-history", "-q",
		"--dir", dir, "--variant", "a="+urls["a"], "--variant", "b="+urls["b"], "--variant", "c="+urls["c"])
	if code != ExitOK {
		t.Fatalf("apiperf sweep --variant x3 = %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	var vs []compare.Variant
	for _, name := range []string{"a", "b", "c"} {
		if n := counts[name].Load(); n != 400 {
			t.Errorf("variant %s received %d requests, want 2 levels x 200", name, n)
		}
		if !strings.Contains(stdout, "== variant "+name+": "+urls[name]) {
			t.Errorf("stdout lacks the heading of variant %s", name)
		}
		r, err := result.Load(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("variant %s's run directory: %v", name, err)
		}
		if r.Name != name || r.Scenario.URL != urls[name] {
			t.Errorf("variant %s saved run %q of %s", name, r.Name, r.Scenario.URL)
		}
		vs = append(vs, compare.VariantOf(name, r))
	}
	for _, f := range []string{"compare.html", "compare.qps.svg", "compare.p99.svg", "compare.successrate.png"} {
		if st, err := os.Stat(filepath.Join(dir, "compare", f)); err != nil || st.Size() == 0 {
			t.Errorf("the variant sweep did not write compare/%s (%v)", f, err)
		}
	}
	// The table is the comparison of the saved runs: header, a row per variant in order,
	// each with its % of the first as the runs give it.
	all := strings.Split(stdout, "\n")
	var lines []string
	for i, l := range all {
		if f := strings.Fields(l); len(f) > 0 && f[0] == "run" && strings.Contains(l, "% of a") {
			lines = all[i:]
		}
	}
	if len(lines) < 4 {
		t.Fatalf("apiperf sweep --variant printed\n%s\nwant a comparison table with %% of a and three rows", stdout)
	}
	m := compare.NewMulti(vs)
	for i, name := range []string{"a", "b", "c"} {
		f := strings.Fields(lines[i+1])
		want := fmt.Sprintf("%.1f%%", m.PctOfFirst(i))
		if len(f) < 4 || f[0] != name || f[3] != want {
			t.Errorf("row %d = %q, want variant %s at %s of a", i+1, lines[i+1], name, want)
		}
	}
}

// TestSweepVariantsBadInput: every mistake is a one-line usage error (exit 2) before any traffic.
func TestSweepVariantsBadInput(t *testing.T) {
	u, n := variantServer(t, 0)
	base := []string{"sweep", "--levels", "2", "-n", "10", "--warmup", "0", "--no-history", "--dir", t.TempDir()}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"URL too", []string{"--variant", "a=" + u, "--variant", "b=" + u, u}, "give a URL or --variant NAME=URL, not both"},
		{"one variant", []string{"--variant", "a=" + u}, "at least two variants, got 1"},
		{"twice", []string{"--variant", "a=" + u, "--variant", "a=" + u}, `"a": the name is given twice`},
		{"no name", []string{"--variant", u, "--variant", "b=" + u}, "want NAME=URL"},
		{"unknown pid name", []string{"--variant", "a=" + u, "--variant", "b=" + u, "--variant-pid", "z=1"}, `no --variant is named "z"`},
		{"one-target flag", []string{"--variant", "a=" + u, "--variant", "b=" + u, "--target-pid", "1"}, "--target-pid names one target"},
		{"bad URL", []string{"--variant", "a=" + u, "--variant", "b=ftp://x/"}, `variant b: "ftp://x/"`},
	}
	for _, tt := range tests {
		code, _, stderr := runCLI(t, append(append([]string{}, base...), tt.args...)...)
		if code != ExitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("%s: apiperf sweep %q = %d, stderr %q; want exit 2 saying %q", tt.name, tt.args, code, stderr, tt.want)
		}
	}
	if got := n.Load(); got != 0 {
		t.Errorf("bad input sent %d requests, want none", got)
	}
}
