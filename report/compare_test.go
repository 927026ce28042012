package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/compare"
	"github.com/apiperf/apiperf/internal/browsertest"
	"github.com/apiperf/apiperf/internal/golden"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/sweep"
)

// variantRun is a sweep at the given levels whose QPS is scale times synthSweep's shape.
func variantRun(name string, scale float64, levels ...int) *result.Run {
	r := synthSweep()
	r.Name = name
	r.Steps = nil
	for _, c := range levels {
		r.Steps = append(r.Steps, synthStep(c, scale*float64(c)*100, time.Duration(float64(2*time.Millisecond)/scale), measure.Errors{}, 0))
	}
	obj, _ := sweep.ParseObjective(sweep.DefaultObjective)
	r.Sweep = sweep.NewRecord(sweep.Plan{Levels: levels}, obj, sweep.Rules{})
	r.Sweep.Analyze(r.Steps)
	return r
}

func synthMulti() *compare.Multi {
	var vs []compare.Variant
	for _, v := range []struct {
		name   string
		scale  float64
		levels []int
	}{{"net/http", 1, []int{10, 50, 100}}, {"<b>gin</b>", 1.2, []int{10, 50, 100}}, {"echo", 0.5, []int{10, 50}}} {
		vv := compare.VariantOf(v.name, variantRun(v.name, v.scale, v.levels...))
		vv.Source = v.name + "/run.json"
		vv.NativeQPS = 24000 // one native sweep for all, as sweep --variant --vs-native gives
		if v.name == "<b>gin</b>" {
			vv.TargetCPU, vv.TargetRSS, vv.RequestsPerConn = 0.6, 30<<20, 1200
		}
		vs = append(vs, vv)
	}
	m := compare.NewMulti(vs)
	m.Notes = []string{"% of native: every variant against plain net/http's peak of 24000 req/s, swept once with net/http's plan"}
	return m
}

func TestCompareText(t *testing.T) {
	var b bytes.Buffer
	if err := CompareText(&b, synthMulti()); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "compare.txt", b.Bytes())
	got := strings.Join(strings.Fields(b.String()), " ") // columns are aligned with spaces
	for _, want := range []string{
		"% of net/http", "p99 @10", "p99 @50", // common levels only: echo did not run c=100
		"<b>gin</b> 12000 c=100 120.0%",
		"echo 2500 c=50 25.0%",
		"<b>gin</b> has the highest peak: 12000 req/s, 120.0% of net/http's 10000 req/s",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("CompareText =\n%s\nwant it to contain %q", got, want)
		}
	}
	// What "% of native" is measured against is a note under the table, not a warning.
	if !strings.Contains(b.String(), "\n% of native: every variant against") || strings.Contains(b.String(), "warning: % of native") {
		t.Errorf("CompareText =\n%s\nwant the %% of native note as a plain line, not a warning", b.String())
	}
	if strings.Contains(got, "p99 @100") {
		t.Errorf("CompareText shows p99 at c=100, which echo did not measure:\n%s", got)
	}
}

func TestCompareInBrowser(t *testing.T) {
	dir := t.TempDir()
	paths, err := WriteCompare(dir, synthMulti())
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 7 {
		t.Errorf("WriteCompare wrote %v, want 3 charts as .png and .svg and compare.html", paths)
	}
	page, err := os.ReadFile(filepath.Join(dir, CompareHTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	// The page with its embedded charts replaced by a marker, and the charts themselves.
	golden.Check(t, "compare.html", stripData(page))
	for _, f := range []string{"compare.qps.svg", "compare.p99.svg", "compare.successrate.svg"} {
		golden.Check(t, f, mustRead(t, filepath.Join(dir, f)))
	}
	if !strings.Contains(string(page), "&lt;b&gt;gin&lt;/b&gt;") || strings.Contains(string(page), "<b>gin</b>") {
		t.Errorf("compare.html does not escape the run name <b>gin</b>")
	}
	p := browsertest.Open(t, filepath.Join(dir, CompareHTMLFile))
	checkPage(t, p, []string{"qps", "p99", "successrate"})
	if got := p.Text(t, "#headline"); !strings.Contains(got, "<b>gin</b> has the highest peak") {
		t.Errorf("compare headline = %q, want the run name shown as text", got)
	}
	if got := p.Text(t, "#warnings"); got != "None." {
		t.Errorf("compare.html warnings = %q, want None. (the %% of native note is not a warning)", got)
	}
	var rows int
	p.Eval(t, `document.querySelectorAll("#runs tbody tr").length`, &rows)
	if rows != 3 {
		t.Errorf("compare.html table has %d rows, want 3 runs", rows)
	}
}
