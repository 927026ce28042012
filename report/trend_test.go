package report

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/internal/browsertest"
	"github.com/apiperf/apiperf/internal/golden"
)

func synthTrend() Trend {
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	t := Trend{Metric: "p99"}
	for i := range 6 {
		v := map[string]float64{"c=10": 1 + 0.1*float64(i), "c=200": 4 + 0.4*float64(i)}
		if i == 2 {
			delete(v, "c=200") // a run that did not measure c=200: a gap, not a made-up point
		}
		t.Runs = append(t.Runs, TrendRun{ID: int64(i + 1), Start: t0.Add(time.Duration(i) * 24 * time.Hour),
			URL: "http://127.0.0.1:8080/a?q=<b>", Commit: "0123456789abcdef", Values: v})
	}
	return t
}

func TestTrendChart(t *testing.T) {
	c := synthTrend().Chart()
	if len(c.X) != 6 || c.X[0] != "#1 03-01 09:00" || len(c.Series) != 2 || c.Series[0].Name != "c=10" || c.Series[1].Name != "c=200" {
		t.Fatalf("Chart() = x %q, series %d; want 6 runs and levels c=10, c=200 in numeric order", c.X, len(c.Series))
	}
	if !math.IsNaN(c.Series[1].Y[2]) || c.Series[1].Y[5] != 6 {
		t.Errorf("c=200 series = %v; want NaN at the run without it and 6 at the last", c.Series[1].Y)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Chart().Validate() = %v", err)
	}
}

func TestTrendHTMLGolden(t *testing.T) {
	var b bytes.Buffer
	if err := synthTrend().HTML(&b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if strings.Contains(page, "<b>") || !strings.Contains(page, "a?q=&lt;b&gt;") || strings.Contains(page, "<?xml") {
		t.Errorf("trend page: the URL from the run must be escaped and the SVG inlined without its XML prolog")
	}
	golden.Check(t, "trend.golden.html", b.Bytes())
}

func TestTrendInBrowser(t *testing.T) {
	base := filepath.Join(t.TempDir(), "trend-p99")
	if err := synthTrend().WriteFiles(base); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{".svg", ".png", ".html"} {
		if st, err := os.Stat(base + ext); err != nil || st.Size() == 0 {
			t.Errorf("WriteFiles: %s%s missing or empty: %v", base, ext, err)
		}
	}
	p := browsertest.Open(t, base+".html")
	if errs := p.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
	if ext := p.ExternalRequests(); len(ext) > 0 {
		t.Errorf("requests outside file:// and data:: %q", ext)
	}
	var width int
	p.Eval(t, `Math.round(document.querySelector("#chart svg").getBoundingClientRect().width)`, &width)
	if width < 200 {
		t.Errorf("inline SVG chart is %d px wide; want it drawn", width)
	}
	img := p.Screenshot(t, "#chart svg")
	if share, colours := browsertest.Ink(img); share < 0.01 || colours < 4 {
		t.Errorf("trend chart looks blank: %.2f%% ink, %d colours", 100*share, colours)
	}
	if got := p.Text(t, "#runs"); !strings.Contains(got, "http://127.0.0.1:8080/a?q=<b>") || !strings.Contains(got, "0123456789ab") {
		t.Errorf("runs table text = %q; want the URL shown as text and the short commit", got)
	}
}

// TestTrendSetPerTarget: runs of two targets make two charts, each with its own runs, and the
// page shows both; file names carry the target when there are several.
func TestTrendSetPerTarget(t *testing.T) {
	var runs []TrendRun
	for i, r := range synthTrend().Runs {
		r.Target = "run GET http://127.0.0.1:8080/a"
		if i%2 == 1 {
			r.Target = "sweep GET http://127.0.0.1:8081/b"
		}
		runs = append(runs, r)
	}
	set := NewTrendSet("p99", runs)
	if len(set.Trends) != 2 || len(set.Trends[0].Runs) != 3 || set.Trends[1].Runs[0].ID != 2 {
		t.Fatalf("NewTrendSet = %d trends; want 2 of 3 runs each, in order of first appearance", len(set.Trends))
	}
	if title := set.Trends[1].Chart().Title; title != "p99 across runs: sweep GET http://127.0.0.1:8081/b" {
		t.Errorf("chart title %q; want the target named", title)
	}
	base := filepath.Join(t.TempDir(), "trend-p99")
	paths, err := set.WriteFiles(base)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range paths {
		names = append(names, filepath.Base(p))
	}
	want := "trend-p99.html trend-p99-run_GET_http-127.0.0.1_8080_a.svg trend-p99-run_GET_http-127.0.0.1_8080_a.png " +
		"trend-p99-sweep_GET_http-127.0.0.1_8081_b.svg trend-p99-sweep_GET_http-127.0.0.1_8081_b.png"
	if strings.Join(names, " ") != want {
		t.Errorf("WriteFiles wrote %v; want %s", names, want)
	}
	page := mustRead(t, base+".html")
	if n := strings.Count(string(page), "<svg"); n != 2 || !strings.Contains(string(page), "6 runs of 2 targets") {
		t.Errorf("trend page has %d charts; want 2 and the summary \"6 runs of 2 targets\"", n)
	}
}

// TestTrendLevelOrder: levels sort by their number, rate labels included (rate=20/s before
// rate=100/s), through the one label parser.
func TestTrendLevelOrder(t *testing.T) {
	tr := Trend{Runs: []TrendRun{{Values: map[string]float64{"rate=100/s": 1, "rate=20/s": 2, "c=200": 3, "c=50": 4}}}}
	if got := strings.Join(tr.levels(), " "); got != "rate=20/s c=50 rate=100/s c=200" {
		t.Errorf("levels() = %q; want them by number", got)
	}
}
