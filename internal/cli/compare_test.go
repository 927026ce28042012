package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiperf/apiperf/internal/browsertest"
)

func TestCompareCommand(t *testing.T) {
	dir := t.TempDir()
	a := measuredRun(t, dir, "nethttp", 2, 4)
	b := measuredRun(t, dir, "gin", 2, 4)
	c := measuredRun(t, dir, "echo", 2)
	out := filepath.Join(dir, "cmp")
	code, stdout, stderr := runCLI(t, "compare", "--dir", out, a, b, c)
	if code != ExitOK {
		t.Fatalf("apiperf compare = %d, stderr %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 6 || !strings.Contains(lines[0], "% of nethttp") || !strings.Contains(lines[0], "p99 @2") || strings.Contains(lines[0], "p99 @4") ||
		!strings.HasPrefix(lines[4], "conditions unknown for every run") {
		t.Errorf("apiperf compare printed\n%s\nwant a header (p99 at c=2 only: echo did not run c=4), 3 rows, the runs' conditions (unknown: made by load.Run alone) and a headline", stdout)
	}
	for i, name := range []string{"nethttp", "gin", "echo"} {
		if f := strings.Fields(lines[i+1]); len(f) == 0 || f[0] != name {
			t.Errorf("row %d = %q, want run %s", i+1, lines[i+1], name)
		}
	}
	for _, f := range []string{"compare.html", "compare.qps.png", "compare.qps.svg", "compare.p99.svg", "compare.successrate.svg"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("apiperf compare did not write %s (%v)", f, err)
		}
	}
	// The page apiperf compare wrote, in headless Chromium: three runs, the charts decoded.
	p := browsertest.Open(t, filepath.Join(out, "compare.html"))
	if errs := p.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("compare.html: console errors %q", errs)
	}
	var rows, charts int
	p.Eval(t, `document.querySelectorAll("#runs tbody tr").length`, &rows)
	p.Eval(t, `[...document.querySelectorAll("figure.chart img")].filter(i => i.naturalWidth > 0).length`, &charts)
	if rows != 3 || charts != 3 {
		t.Errorf("compare.html shows %d runs and %d decoded charts, want 3 and 3 (QPS, p99, success)", rows, charts)
	}
	if h := p.Text(t, "#headline"); !strings.Contains(h, "has the highest peak") {
		t.Errorf("compare.html headline = %q, want the fastest run named", h)
	}
	// diff stays the two-run case.
	if code, _, stderr := runCLI(t, "diff", "--dir", out, a, b); code != ExitOK {
		t.Errorf("apiperf diff A B = %d, stderr %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "compare", a); code != ExitUsage || !strings.Contains(stderr, "at least two runs") {
		t.Errorf("apiperf compare A = %d, stderr %q; want exit 2 asking for two runs", code, stderr)
	}
}
