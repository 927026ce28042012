package report

import (
	"bytes"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/apiperf/apiperf/compare"
	"github.com/apiperf/apiperf/internal/golden"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/sweep"
)

// synthDiff compares the synthetic sweep with a classic .dat that lacks level 50 and has 200.
func synthDiff(t *testing.T) *compare.Diff {
	t.Helper()
	rows, err := ReadDat("old.dat", strings.NewReader("10 3000.00 3.1 100.00\n100 9100.00 12.5 100.00\n200 9000.00 30 97.50\n"))
	if err != nil {
		t.Fatal(err)
	}
	b := DatSide("old", rows)
	b.Source = "old.dat"
	return compare.New(compare.FromRun("demo", synthSweep()), b)
}

func TestDiffText(t *testing.T) {
	var b bytes.Buffer
	if err := DiffText(&b, synthDiff(t)); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "diff.txt", b.Bytes())
	if !strings.Contains(b.String(), "demo's peak QPS is 98.90% of old's (9000.00 at c=50 vs 9100.00 at c=100)") {
		t.Errorf("DiffText has no headline ratio:\n%s", b.String())
	}
}

func TestWriteDiff(t *testing.T) {
	dir := t.TempDir()
	paths, err := WriteDiff(dir, synthDiff(t))
	if err != nil {
		t.Fatalf("WriteDiff: %v", err)
	}
	var got []string
	for _, p := range paths {
		got = append(got, filepath.Base(p))
	}
	sort.Strings(got)
	want := "demo_old.diff.html demo_old.qps.ttlb.diff.png demo_old.qps.ttlb.diff.svg demo_old.successrate.diff.png demo_old.successrate.diff.svg"
	if strings.Join(got, " ") != want {
		t.Fatalf("WriteDiff wrote %v, want %s", got, want)
	}
	golden.Check(t, "demo_old.qps.ttlb.diff.svg", mustRead(t, filepath.Join(dir, "demo_old.qps.ttlb.diff.svg")))
	golden.Check(t, "demo_old.successrate.diff.svg", mustRead(t, filepath.Join(dir, "demo_old.successrate.diff.svg")))
	golden.Check(t, "diff.html", stripData(mustRead(t, filepath.Join(dir, "demo_old.diff.html"))))
}

// TestDiffNames proves diff file names come from the names made safe, not a regex that
// eats letters (the classic script turned mydata.dat into "ma").
func TestDiffNames(t *testing.T) {
	d := compare.New(compare.Side{Name: "mydata"}, compare.Side{Name: "../x y"})
	if got := DiffBase(d); got != "mydata_x_y" {
		t.Errorf("DiffBase = %q, want mydata_x_y", got)
	}
}

var dataURL = regexp.MustCompile(`data:image/svg&#43;xml;base64,[A-Za-z0-9+/=&#;]*`)

// stripData replaces embedded chart data (checked by the SVG golden files) with a marker.
func stripData(b []byte) []byte {
	return dataURL.ReplaceAll(b, []byte("data:image/svg+xml;base64,(chart)"))
}

func TestHTMLGolden(t *testing.T) {
	var b bytes.Buffer
	if err := HTML(&b, synthSweep()); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "report.html", stripData(b.Bytes()))
	s := b.String()
	for _, bad := range []string{"<script>", "<b>"} {
		if strings.Contains(s, bad) {
			t.Errorf("report.html holds the unescaped %q from the target", bad)
		}
	}
	if n := strings.Count(s, `<img alt=`); n != 3 {
		t.Errorf("report.html has %d charts, want 3", n)
	}
}

// TestHTMLSingleRun proves a plain run (one step) renders, with its headline.
func TestHTMLSingleRun(t *testing.T) {
	r := synthSweep()
	r.Kind, r.Steps, r.Sweep = "run", []*measure.Step{r.Steps[0]}, nil
	var b bytes.Buffer
	if err := HTML(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "9000.00 requests/sec at c=50; p99 12.01ms") {
		t.Errorf("single-run headline missing:\n%s", stripData(b.Bytes()))
	}
}

// TestHTMLUsesSweepAnalysis proves a sweep's own peak/knee lines (its objective, its stop
// reason) head the report rather than a recomputation.
func TestHTMLUsesSweepAnalysis(t *testing.T) {
	r := synthSweep()
	obj, err := sweep.ParseObjective("p99<=100ms,success>=99%")
	if err != nil {
		t.Fatal(err)
	}
	r.Sweep = sweep.NewRecord(sweep.Plan{Levels: []int{10, 50, 100}}, obj, sweep.Rules{})
	r.Sweep.Analyze(r.Steps)
	want := r.Sweep.Headlines()
	got := Headline(r)
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Headline = %q, want the sweep's %q", got, want)
	}
}
