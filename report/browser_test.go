package report

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiperf/apiperf/internal/browsertest"
)

// checkPage asserts what every apiperf page must do in a browser: no console errors, no
// request outside file:// and data:, no script element, and each chart drawn.
func checkPage(t *testing.T, p *browsertest.Page, charts []string) {
	t.Helper()
	if errs := p.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
	if ext := p.ExternalRequests(); len(ext) > 0 {
		t.Errorf("requests outside file:// and data:: %q", ext)
	}
	if len(p.Requests()) == 0 {
		t.Errorf("no request seen at all; the network listener is not working")
	}
	var scripts int
	p.Eval(t, `document.querySelectorAll("script").length`, &scripts)
	if scripts != 0 {
		t.Errorf("the page has %d <script> elements, want none (target text must be escaped)", scripts)
	}
	for _, id := range charts {
		sel := "#chart-" + strings.ReplaceAll(id, ".", `\.`) + " img"
		var natural int
		p.Eval(t, `document.querySelector("`+strings.ReplaceAll(sel, `\`, `\\`)+`").naturalWidth`, &natural)
		if natural == 0 {
			t.Errorf("chart %s did not decode (naturalWidth 0)", id)
			continue
		}
		img := p.Screenshot(t, sel)
		share, colours := browsertest.Ink(img)
		if share < 0.01 || colours < 4 {
			t.Errorf("chart %s looks blank: %.2f%% ink, %d colours in a %v screenshot", id, 100*share, colours, img.Bounds().Size())
		}
	}
}

func TestReportInBrowser(t *testing.T) {
	dir := t.TempDir()
	if _, err := WriteAll(dir, synthSweep()); err != nil {
		t.Fatal(err)
	}
	p := browsertest.Open(t, filepath.Join(dir, HTMLFile))
	checkPage(t, p, []string{"qps_ttlb", "successrate", "latency"})
	// The header value, URL and warning from the target show as text, not markup.
	for sel, want := range map[string]string{
		"dl.spec":   "X-Test: <script>alert(1)</script>",
		"#target":   "GET http://127.0.0.1:8080/a?q=<b>",
		"#warnings": "target said <script>alert(2)</script>",
		"#command":  "-H 'X-Test: <script>alert(1)</script>'",
		"#headline": "peak: c=50, 9000 req/s",
	} {
		if got := p.Text(t, sel); !strings.Contains(got, want) {
			t.Errorf("text of %s = %q, want it to show %q", sel, got, want)
		}
	}
}

func TestDiffInBrowser(t *testing.T) {
	dir := t.TempDir()
	d := synthDiff(t)
	if _, err := WriteDiff(dir, d); err != nil {
		t.Fatal(err)
	}
	p := browsertest.Open(t, filepath.Join(dir, DiffHTMLFile(d)))
	checkPage(t, p, []string{"qps.ttlb.diff", "successrate.diff"})
	if got := p.Text(t, "#headline"); !strings.Contains(got, "demo's peak QPS is 98.90% of old's") {
		t.Errorf("diff headline = %q", got)
	}
}
