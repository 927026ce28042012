package report

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apiperf/apiperf/internal/liveheap"
	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/report/chart"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/scenario"
	"github.com/apiperf/apiperf/sweep"
)

// bigSweep is a sweep of n levels shaped like a real one (a fixture, not a measurement):
// each step has two latency histograms of about 2,000 buckets, 15 one-second intervals, its
// 10 slowest requests and one per latency band, as a long sweep's run.json holds.
func bigSweep(n int) *result.Run {
	rng := rand.New(rand.NewPCG(43, uint64(n)))
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r := &result.Run{
		Version: result.Version, Tool: "apiperf test", Kind: result.KindSweep, Name: "big",
		Command:  []string{"apiperf", "sweep", "--levels", "1:" + itoa(n), "http://127.0.0.1:8080/"},
		Scenario: scenario.Scenario{URL: "http://127.0.0.1:8080/"},
		Load:     load.Config{Connections: 1, Threads: 2, Duration: measure.Duration(15 * time.Second), Timeout: measure.Duration(2 * time.Second)},
		Start:    start, End: start.Add(time.Duration(n) * 15 * time.Second),
	}
	var plan sweep.Plan
	for i := range n {
		c := i + 1
		plan.Levels = append(plan.Levels, c)
		s := &measure.Step{
			Label: "c=" + itoa(c), Concurrency: c, Threads: 2, Elapsed: measure.Duration(15 * time.Second),
			Start:   start.Add(time.Duration(i) * 15 * time.Second),
			Latency: measure.NewHistogram(), AllAttempts: measure.NewHistogram(),
			Exemplars: &measure.Exemplars{Keep: 10},
		}
		for range 6000 {
			s.Latency.RecordN(time.Duration(15+rng.ExpFloat64()*float64(200+2*c))*time.Microsecond, 1+int64(rng.IntN(300)))
		}
		s.AllAttempts.Merge(s.Latency)
		s.Requests = s.Latency.Count()
		s.Attempts, s.Successes, s.Bytes = s.Requests, s.Requests, 123*s.Requests
		s.Status = map[int]int64{200: s.Requests}
		for k := range 15 {
			s.Timeline = append(s.Timeline, measure.Second{T: k, Requests: s.Requests / 15, Bytes: 123 * s.Requests / 15,
				P50: 0.1 + rng.Float64()/10, P99: 2 + rng.Float64(), Max: 10 + rng.Float64()*5})
		}
		for k := range 10 {
			s.Exemplars.Slowest = append(s.Exemplars.Slowest, measure.Exemplar{Latency: measure.Duration(time.Duration(15000-k*300-rng.IntN(200)) * time.Microsecond),
				Start: measure.Duration(time.Duration(rng.Int64N(int64(15 * time.Second)))), Status: 200, Conn: rng.IntN(c)})
		}
		for _, p := range measure.Bands {
			s.Exemplars.Bands = append(s.Exemplars.Bands, measure.Band{Percentile: p, Exemplar: measure.Exemplar{Latency: measure.Duration(s.Latency.Percentile(p)),
				Start: measure.Duration(time.Duration(rng.Int64N(int64(15 * time.Second)))), Status: 200, Conn: rng.IntN(c)}})
		}
		s.Finish()
		r.Steps = append(r.Steps, s)
	}
	obj, _ := sweep.ParseObjective(sweep.DefaultObjective)
	r.Sweep = sweep.NewRecord(plan, obj, sweep.Rules{})
	r.Sweep.Analyze(r.Steps)
	return r
}

// TestReportMemoryBounded: re-rendering a 300-level sweep from its run.json (apiperf report)
// takes memory in proportion to the document: loading it, what it decodes to (about its
// size); writing report.html (larger than the document), at most the document's size again;
// writing every output, a quarter of it and the charts' canvases. A 35 MB run.json once took
// 15 times its size: every histogram decoded in full (188 KB each), then as 6 bytes a bucket,
// the document held whole while it decoded, and report.html held whole with all its
// per-step sections.
func TestReportMemoryBounded(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.json")
	if err := bigSweep(300).Save(path); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := uint64(st.Size())
	if _, err := WriteAll(filepath.Join(dir, "warm"), synthSweep()); err != nil { // templates and fonts are loaded once a process
		t.Fatal(err)
	}
	var r *result.Run
	loading, before := liveheap.Peak(func() {
		if r, err = result.Load(path); err != nil {
			t.Fatal(err)
		}
	})
	page := outputs{dir: filepath.Join(dir, "page")}
	if err := os.Mkdir(page.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writingHTML, loaded := liveheap.Peak(func() {
		if err := page.render(HTMLFile, func(w io.Writer) error { return HTML(w, r) }); err != nil {
			t.Fatal(err)
		}
	})
	out := filepath.Join(dir, "out")
	writingAll, _ := liveheap.Peak(func() {
		if _, err := WriteAll(out, r); err != nil {
			t.Fatal(err)
		}
	})
	html, err := os.Stat(filepath.Join(out, HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("run.json %d KB, report.html %d KB: live heap %d KB before, %d KB loaded; at most %d KB while loading, %d KB writing report.html, %d KB writing every output",
		doc>>10, html.Size()>>10, before>>10, loaded>>10, loading>>10, writingHTML>>10, writingAll>>10)
	const canvas = 4 * chart.DefaultWidth * chart.DefaultHeight // an RGBA chart image, whatever the run
	for _, c := range []struct {
		what       string
		peak, from uint64
		bound      uint64
		boundIs    string
	}{
		{"result.Load", loading, before, doc * 3 / 2, "1.5 times the document (what it decodes to, about its size)"},
		{"HTML (report.html)", writingHTML, loaded, doc, "the document's size"},
		{"WriteAll", writingAll, loaded, doc/4 + 3*canvas, fmt.Sprintf("a quarter of the document and three chart canvases of %d KB", canvas>>10)},
	} {
		if g := c.peak - min(c.peak, c.from); g > c.bound {
			t.Errorf("%s of a %d KB run.json grew the live heap by %d KB (%.1f times the document); want at most %d KB, %s",
				c.what, doc>>10, g>>10, float64(g)/float64(doc), c.bound>>10, c.boundIs)
		}
	}
}
