package report

import (
	"bytes"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/internal/browsertest"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/result"
)

// withTimelines gives withTarget's steps 10 one-second intervals each, 15 s apart like their
// target captures: level i serves 1000*(i+1) req/s, with its p99 at 10*(i+1) ms.
func withTimelines(t *testing.T) *result.Run {
	r := withTarget(t)
	for i, s := range r.Steps {
		s.Start = r.Start.Add(time.Duration(i) * 15 * time.Second)
		s.Timeline = nil
		for k := range 10 {
			n := int64(1000 * (i + 1))
			s.Timeline = append(s.Timeline, measure.Second{T: k, Requests: n, Errors: int64(k % 2),
				P50: float64(i + 1), P99: float64(10 * (i + 1)), Max: float64(20 * (i + 1))})
		}
	}
	return r
}

func TestTimelineSections(t *testing.T) {
	r := withTimelines(t)
	var b bytes.Buffer
	if err := HTML(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="chart-timeline_qps"`, `id="chart-timeline_latency"`, `id="chart-target_goroutines_time"`, "Over time"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if got := timelineSections(synthSweep()); got != nil {
		t.Errorf("a run without timelines got %d timeline sections", len(got))
	}
}

// TestQPSAt: the target's sample times pick the rate of the interval that holds them.
func TestQPSAt(t *testing.T) {
	r := withTimelines(t)
	for _, tc := range []struct {
		at   float64
		want float64
	}{
		{0.5, 1000},  // first second of the first level
		{9.9, 1000},  // its last second
		{12, -1},     // between levels: nothing measured
		{15.5, 2000}, // the second level (started at 15 s)
		{40, 3000},   // the third level's last second
	} {
		got := qpsAt(r, r.Start, []float64{tc.at})[0]
		if (tc.want < 0 && !math.IsNaN(got)) || (tc.want >= 0 && got != tc.want) {
			t.Errorf("qpsAt(%v s) = %v, want %v (-1: NaN)", tc.at, got, tc.want)
		}
	}
}

func TestTimelineInBrowser(t *testing.T) {
	dir := t.TempDir()
	if _, err := WriteAll(dir, withTimelines(t)); err != nil {
		t.Fatal(err)
	}
	p := browsertest.Open(t, filepath.Join(dir, HTMLFile))
	checkPage(t, p, []string{"timeline_qps", "timeline_latency", "target_cpu_time", "target_goroutines_time"})
}
