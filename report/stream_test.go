package report

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/internal/golden"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/result"
)

// TestTextGRPCStreamGolden: a gRPC server-stream step (a fixture) in open loop: gRPC codes by
// name, the messages, and the streams' first-message (both views) and gap lines.
func TestTextGRPCStreamGolden(t *testing.T) {
	r := textRun()
	r.Scenario.URL = "grpc://127.0.0.1:9090/apiperf.demo.Demo/Watch"
	r.Load.HTTP2, r.Load.Streams, r.Load.Rate = true, 4, 100
	s := r.Last()
	s.Status = map[int]int64{0: 900, 14: 100}
	s.Uncorrected = s.Latency.Clone()
	s.Open = &measure.OpenLoop{TargetRate: 100, Scheduled: 1000, Connections: 4}
	s.HTTP2 = &measure.HTTP2{Protocol: "h2c", Streams: 4}
	s.GRPC = &measure.GRPC{Method: "/apiperf.demo.Demo/Watch", Messages: 18000, MessageBytes: 180000}
	st := &measure.Streams{Kind: "grpc", Streams: 900, Messages: 18000, MinMessages: 20, MaxMessages: 20,
		First: measure.NewHistogram(), FirstUncorrected: measure.NewHistogram(), Gap: measure.NewHistogram()}
	st.First.RecordN(250*time.Millisecond, 900)
	st.FirstUncorrected.RecordN(100*time.Millisecond, 900)
	st.Gap.RecordN(10*time.Millisecond, 17100)
	s.Streams = st
	s.Finish()
	var b bytes.Buffer
	Header(&b, r)
	Text(&b, r, s, TextOptions{})
	golden.Check(t, "text_grpc_stream.golden", b.Bytes())

	b.Reset()
	if err := WriteBench(&b, r); err != nil {
		t.Fatal(err)
	}
	if want := "success-%\t250111000 first-p50-ns/op\t250111000 first-p99-ns/op\t10007000 gap-p50-ns/op\t10007000 gap-p99-ns/op\n"; !bytes.HasSuffix(b.Bytes(), []byte(want)) {
		t.Errorf("bench line of a stream step:\n%s\nwant it to end %q", b.String(), want)
	}
}

// streamedSweep is synthSweep with 10 server-sent event streams of n events in every step,
// the first after 100 ms x the step's number, then one every 10 ms.
func streamedSweep(n int64) *result.Run {
	r := synthSweep()
	for i, s := range r.Steps {
		st := &measure.Streams{Kind: "sse", Streams: 10, Messages: 10 * n, First: measure.NewHistogram(), Gap: measure.NewHistogram()}
		st.First.RecordN(time.Duration(i+1)*100*time.Millisecond, 10)
		st.Gap.RecordN(10*time.Millisecond, 10*(n-1))
		s.Streams = st
	}
	r.Sweep.Analyze(r.Steps)
	return r
}

// TestSweepTableStreams: a sweep of streams shows each level's p99 time to first message and
// p99 gap; a sweep without streams keeps its columns (the other goldens).
func TestSweepTableStreams(t *testing.T) {
	r := streamedSweep(10)
	var b bytes.Buffer
	SweepTable(&b, r)
	golden.Check(t, "sweep_table_streams.golden", b.Bytes())
}

// TestHTMLStreams: report.html of a sweep of server-sent events has a Streams section with
// each level's time to first event and gaps; a sweep without streams has none.
func TestHTMLStreams(t *testing.T) {
	r := synthSweep()
	var b bytes.Buffer
	if err := HTML(&b, r); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b.Bytes(), []byte(`class="streams"`)) {
		t.Error("report.html of a sweep without streams has a Streams table")
	}
	for i, s := range r.Steps {
		st := &measure.Streams{Kind: "sse", Streams: 10, Messages: 200, MinMessages: 20, MaxMessages: 20, First: measure.NewHistogram(), Gap: measure.NewHistogram()}
		st.First.RecordN(time.Duration(i+1)*100*time.Millisecond, 10)
		st.Gap.RecordN(10*time.Millisecond, 190)
		s.Streams = st
	}
	r.Sweep.Analyze(r.Steps)
	b.Reset()
	if err := HTML(&b, r); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{`<h2>Streams</h2>`, "Server-sent events: the time to the first event", `class="streams"`,
		"<td>" + r.Steps[0].Label + "</td><td>10</td><td>20.0 (20 to 20)</td><td>0</td><td>100.03ms</td>", "<td>10.01ms</td>"} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html of an SSE sweep lacks %q", want)
		}
	}
}

// TestDatStreams: a sweep of streams writes its .dat with the stream columns after the four
// classic ones, named by a comment line, and reads back as the same levels; the classic .dat
// of a sweep without streams is unchanged (demo.dat's golden).
func TestDatStreams(t *testing.T) {
	r := streamedSweep(20)
	var b bytes.Buffer
	if err := WriteDat(&b, r.Sweep.Levels); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "streams.dat", b.Bytes())
	rows, err := ReadDat("streams.dat", bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatalf("ReadDat of WriteDat's streamed output: %v\n%s", err, b.String())
	}
	if len(rows) != len(r.Sweep.Levels) {
		t.Fatalf("ReadDat read %d levels, want %d", len(rows), len(r.Sweep.Levels))
	}
	for i, l := range r.Sweep.Levels {
		if rows[i].Value != l.Value || math.Abs(rows[i].QPS-l.QPS) > 0.01 {
			t.Errorf("level %d read back as %v at %.2f req/s, want %v at %.2f", i, rows[i].Value, rows[i].QPS, l.Value, l.QPS)
		}
	}
}
