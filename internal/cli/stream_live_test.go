package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/internal/browsertest"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/target"
)

// watchBody asks the built-in gRPC target's Watch for 5 messages, the first after 20 ms,
// then one every 10 ms.
const watchBody = `{"count":5,"delay_ms":20,"gap_ms":10}`

// TestRunStreamHlogReadByHdrHistogramJS: `run --hlog` of a gRPC server stream logs its
// intervals' times to first message and gaps as histograms tagged first and gap, which
// hdr-histogram-js reads: their counts are the run's streams and gaps, and the untagged
// latency still counts every response.
func TestRunStreamHlogReadByHdrHistogramJS(t *testing.T) {
	_, err := exec.LookPath("node")
	_, err2 := os.Stat(filepath.Join(hlogJSDir, "node_modules", "hdr-histogram-js"))
	needTool(t, "node or hdr-histogram-js", err == nil && err2 == nil, "run `npm ci --prefix live/testdata/hlogjs` (.ci/run does)")
	g := startGRPC(t, target.GRPCConfig{})
	dir := t.TempDir()
	hlog, out := filepath.Join(dir, "run.hlog"), filepath.Join(dir, "run.json")
	code, _, stderr := runCLI(t, "run", "-q", "--no-history", "--hlog", hlog, "-o", out, "-c", "2", "--streams", "2", "-d", "1500ms",
		"--body", watchBody, g.URL("Watch"))
	if code != ExitOK {
		t.Fatalf("run exited %d: %s", code, stderr)
	}
	s := readRun(t, out).Steps[0]
	if s.Streams == nil || s.Streams.Streams == 0 {
		t.Fatalf("the run recorded no streams: %+v", s.Streams)
	}
	b, err := exec.Command("node", filepath.Join(hlogJSDir, "count.js"), hlog).CombinedOutput()
	if err != nil {
		t.Fatalf("node count.js %s: %v\n%s", hlog, err, b)
	}
	var got struct {
		Intervals, Corrected, First, Gap int64
		FirstMaxMs                       float64 `json:"first_max_ms"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("node count.js printed %q: %v", b, err)
	}
	if got.Corrected != s.Requests || got.First != s.Streams.First.Count() || got.Gap != s.Streams.Gap.Count() {
		t.Errorf("hdr-histogram-js read %d corrected, %d first and %d gap samples; the run has %d responses, %d first messages and %d gaps",
			got.Corrected, got.First, got.Gap, s.Requests, s.Streams.First.Count(), s.Streams.Gap.Count())
	}
	if got.FirstMaxMs < 20 {
		t.Errorf("hdr-histogram-js read a longest time to first message of %v ms; the server waits 20 ms", got.FirstMaxMs)
	}
}

// TestListenPrometheusStreams: a real Prometheus scrapes `run --listen` of a gRPC server
// stream: /metrics has the stream series during the run (promtool accepts the page), and
// Prometheus's last scrape counts the run's streams and messages, and in the native
// histograms every first message and gap.
func TestListenPrometheusStreams(t *testing.T) {
	prom, err := exec.LookPath("prometheus")
	promtool, err2 := exec.LookPath("promtool")
	needTool(t, "prometheus or promtool", err == nil && err2 == nil, "`apt-get install prometheus` (.ci/run does)")
	g := startGRPC(t, target.GRPCConfig{})
	run := promRun{url: g.URL("Watch"), args: []string{"-R", "40", "-d", "4s", "-c", "2", "--streams", "4", "--body", watchBody},
		want: []string{"apiperf_streams_total ", "apiperf_stream_messages_total ", "apiperf_stream_message_rate ",
			"apiperf_stream_first_message_seconds_bucket{", "apiperf_stream_message_gap_seconds_bucket{"},
		check: checkStreamScrape}
	for _, native := range []bool{false, true} {
		t.Run(map[bool]string{false: "text", true: "native"}[native], func(t *testing.T) {
			t.Parallel()
			listenPrometheus(t, prom, promtool, run, native)
		})
	}
}

// checkStreamScrape compares what Prometheus scraped last with the run's streams (within a
// scrape interval: 500 ms of 40 streams a second).
func checkStreamScrape(t *testing.T, query func(string) float64, r *result.Run, native bool) {
	st := r.Steps[0].Streams
	if st == nil {
		t.Fatal("the run recorded no streams")
	}
	near := func(what, expr string, want int64, slack float64) {
		got := query(expr)
		if d := float64(want) - got; d < 0 || d > slack {
			t.Errorf("Prometheus: %s = %v; the run has %d %s", expr, got, want, what)
		}
	}
	near("streams", "max_over_time(apiperf_streams_total[1m])", st.Streams, 20)
	near("messages", "max_over_time(apiperf_stream_messages_total[1m])", st.Messages, 100)
	if native {
		near("first messages", "histogram_count(apiperf_stream_first_message_seconds)", st.First.Count(), 20)
		near("gaps", "histogram_count(apiperf_stream_message_gap_seconds)", st.Gap.Count(), 100)
		if p50 := query("histogram_quantile(0.5, apiperf_stream_first_message_seconds)"); !(p50 >= 0.018 && p50 < 2) {
			t.Errorf("p50 time to first message from the native histogram = %v s; the server waits 20 ms", p50)
		}
	} else {
		near("first messages", "apiperf_stream_first_message_seconds_count", st.First.Count(), 20)
	}
	t.Logf("Prometheus scraped the stream figures of the run's %d streams, %d messages", st.Streams, st.Messages)
}

// TestLivePageStreams opens the live page in headless Chromium during `run --listen` of a
// gRPC server stream: its Streams card is shown with the last second's time to first message
// and gap, and the page logs no errors.
func TestLivePageStreams(t *testing.T) {
	if browsertest.Find() == "" && os.Getenv("CI") == "" {
		t.Skip("skipping: no Chromium found")
	}
	g := startGRPC(t, target.GRPCConfig{})
	listen := freeAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	wait := startRun(ctx, "run", "-q", "--no-history", "--listen", listen, "-c", "2", "--streams", "4", "-d", "10s", "--body", watchBody, g.URL("Watch"))
	p := openLivePage(t, listen, 2500*time.Millisecond)
	var hidden bool
	p.Eval(t, `document.getElementById("streams").hidden`, &hidden)
	if now := p.Text(t, "#now-stream"); hidden || !strings.Contains(now, "first p50 ") || !strings.Contains(now, "gap p99 ") || !strings.Contains(now, "msg/s") {
		t.Errorf("live page of a streamed run: Streams card hidden %v, showing %q; want it shown with the first-message and gap figures", hidden, now)
	}
	cancel()
	if code, _, stderr := wait(); code != 0 && code != 1 {
		t.Errorf("run exited %d: %s", code, stderr)
	}
}
