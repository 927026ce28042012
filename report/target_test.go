package report

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/apiperf/apiperf/internal/browsertest"
	"github.com/apiperf/apiperf/profcap"
	"github.com/apiperf/apiperf/result"
)

// evilName is a function name a target could choose; it must show as text.
const evilName = `main.(*T).<script>alert(3)</script>`

// synthCPU is a small CPU profile: evilName calls the hot leaf, which allocates.
func synthCPU() *profile.Profile {
	fns := []*profile.Function{{ID: 1, Name: "main.main"}, {ID: 2, Name: evilName}, {ID: 3, Name: "main.hot"}, {ID: 4, Name: "runtime.mallocgc"}}
	locs := make([]*profile.Location, len(fns))
	for i, f := range fns {
		locs[i] = &profile.Location{ID: uint64(i + 1), Line: []profile.Line{{Function: f}}}
	}
	return &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		Sample: []*profile.Sample{
			{Location: []*profile.Location{locs[2], locs[1], locs[0]}, Value: []int64{6, 60e6}},
			{Location: []*profile.Location{locs[3], locs[2], locs[1], locs[0]}, Value: []int64{3, 30e6}},
			{Location: []*profile.Location{locs[0]}, Value: []int64{1, 10e6}},
		},
		Location: locs, Function: fns, Period: 10e6, PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
	}
}

// withTarget adds a capture to a synthetic sweep: metrics at every level, a profile at c=50.
func withTarget(t *testing.T) *result.Run {
	t.Helper()
	r := synthSweep()
	a, warns := profcap.Analyze(&profcap.Profiles{CPU: &profcap.Profile{Kind: profcap.KindCPU, Parsed: synthCPU()}}, 10)
	if len(warns) > 0 {
		t.Fatalf("Analyze: %q", warns)
	}
	f := func(v float64) *float64 { return &v }
	tc := &profcap.Record{Metrics: "http://127.0.0.1:6060/metrics?<x>"}
	for i, s := range r.Steps {
		ts := profcap.StepRecord{Label: s.Label, Start: r.Start.Add(time.Duration(i) * 15 * time.Second),
			Series: &profcap.Series{Interval: time.Second}}
		for k := range 10 {
			g := float64(10 * (i + 1))
			ts.Series.Points = append(ts.Series.Points, profcap.Point{Offset: time.Duration(k) * time.Second,
				CPUCores: f(0.5 * float64(i+1)), Goroutines: f(g + float64(k%2)), RSSBytes: f(float64(30+i) * (1 << 20)),
				HeapInuseBytes: f(float64(8+k) * (1 << 20)), GCs: f(1), GCPauseSeconds: f(0.0002)})
		}
		sum := ts.Series.Summarize(0, 10*time.Second)
		ts.Summary = &sum
		if s.Label == "c=50" {
			ts.Profiles, ts.CPUSeconds, ts.CPUFrom = &a, 8, time.Second
			ts.Files = []string{"profiles/c=50/cpu.pb.gz"}
		}
		tc.Steps = append(tc.Steps, ts)
	}
	r.Target = tc
	return r
}

func TestTargetSectionsEscape(t *testing.T) {
	var b bytes.Buffer
	if err := HTML(&b, withTarget(t)); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if strings.Contains(page, "<script>alert(3)") {
		t.Errorf("report.html carries the target's function name unescaped")
	}
	for _, want := range []string{
		`id="top-cum-0"`, `id="top-flat-0"`, `id="flame-0"`, `id="target-metrics"`,
		"main.(*T).&lt;script&gt;alert(3)&lt;/script&gt;", // in the tables and the flame graph
		"Garbage collection: 0.0% of CPU; allocation: 30.0%",
		"profiles/c=50/cpu.pb.gz", `id="chart-target_cpu_time"`, `id="chart-target_levels"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if synth := synthSweep(); len(targetSections(synth)) != 0 {
		t.Errorf("a run without a capture got target sections")
	}
}

func TestTargetSectionsInBrowser(t *testing.T) {
	dir := t.TempDir()
	if _, err := WriteAll(dir, withTarget(t)); err != nil {
		t.Fatal(err)
	}
	p := browsertest.Open(t, filepath.Join(dir, HTMLFile))
	checkPage(t, p, []string{"target_cpu_time", "target_memory_time", "target_levels"})
	if got := p.Text(t, "#top-cum-0"); !strings.Contains(got, evilName) || !strings.Contains(got, "main.hot") {
		t.Errorf("top -cum table text %q lacks %q and main.hot", got, evilName)
	}
	var rects int
	p.Eval(t, `document.querySelectorAll("#flame-0 svg rect").length`, &rects)
	if rects < 4 {
		t.Errorf("flame graph has %d rects, want one per frame (>= 4)", rects)
	}
	var title string
	p.Eval(t, `Array.from(document.querySelectorAll("#flame-0 svg title")).map(e => e.textContent).join("\n")`, &title)
	if !strings.Contains(title, evilName) {
		t.Errorf("flame graph titles %q lack %q as text", title, evilName)
	}
	if got := p.Text(t, "#target-metrics"); !strings.Contains(got, "c=50") {
		t.Errorf("metrics table %q lacks the c=50 row", got)
	}
}
