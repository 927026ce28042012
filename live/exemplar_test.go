package live

import (
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/exposition"
	"github.com/apiperf/apiperf/measure"
)

// TestLatencyExemplars: an interval's traced requests become exemplars of the latency
// histogram's buckets on an OpenMetrics scrape, with the time each ended.
func TestLatencyExemplars(t *testing.T) {
	m := newMetrics(Config{Kind: "run", Target: "http://127.0.0.1:1/"})
	rec := measure.NewRecorder(measure.DefaultExpected(), false, 0)
	stream := measure.NewIntervalStream([]*measure.Recorder{rec}, time.Second)
	var tr measure.TraceID
	tr[0], tr[15] = 0x4b, 0x36
	rec.Add([]measure.Sample{
		{Done: int64(500 * time.Millisecond), Latency: int64(67 * time.Millisecond), Class: measure.Response, Status: 200, X: &measure.Extra{Trace: tr}},
		{Done: int64(600 * time.Millisecond), Latency: int64(3 * time.Millisecond), Class: measure.Response, Status: 200}, // untraced
	})
	start := time.Unix(1700000000, 0)
	stream.Close(func(iv *measure.Interval) {
		iv.StepStart = start
		m.interval(iv)
	})
	p := exposition.NewOpenMetricsPage()
	m.write(p)
	page := string(p.Bytes())
	want := `apiperf_request_duration_seconds_bucket{le="0.1"} 2 # {trace_id="4b000000000000000000000000000036"} 0.067 1.7000000005e+09` + "\n"
	if !strings.Contains(page, want) {
		t.Errorf("OpenMetrics page lacks %q:\n%s", want, page)
	}
	if n := strings.Count(page, "trace_id"); n != 1 {
		t.Errorf("page has %d exemplars, want 1 (the untraced request has none)", n)
	}
}
