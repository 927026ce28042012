package live

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/exposition"
	"github.com/apiperf/apiperf/measure"
)

// streamedInterval is one interval of 10 streams of 20 messages, each first after 100 ms
// (one after 200 ms), with 190 gaps of 10 ms.
func streamedInterval() *measure.Interval {
	iv := testInterval(0, 10, false)
	iv.Streams = &measure.Streams{Streams: 10, Messages: 200, First: measure.NewHistogram(), Gap: measure.NewHistogram()}
	iv.Streams.First.RecordN(100*time.Millisecond, 9)
	iv.Streams.First.Record(200 * time.Millisecond)
	iv.Streams.Gap.RecordN(10*time.Millisecond, 190)
	return iv
}

// TestRenderStreams: the view of a streamed interval shows its time to first message (p50,
// p99), its p99 gap and its messages per second; a run without streams has no such line.
func TestRenderStreams(t *testing.T) {
	iv := streamedInterval()
	out := render(Phase{}, iv, iv.Second(), nil, nil)
	want := "  streams  first p50 100.0ms  p99 200.1ms  gap p99 10.0ms  msg/s 200\n"
	if !strings.Contains(out, want) {
		t.Errorf("render() = \n%s\nwant the line %q", out, want)
	}
	for _, line := range strings.Split(out, "\n") {
		if n := len([]rune(line)); n > 80 {
			t.Errorf("line %q is %d columns, want at most 80", line, n)
		}
	}
	plain := testInterval(0, 10, false)
	if out := render(Phase{}, plain, plain.Second(), nil, nil); strings.Contains(out, "streams") {
		t.Errorf("render() of an interval without streams = \n%s\nwant no streams line", out)
	}
}

// TestMetricsStreams: /metrics of a streamed run has the stream counters, the message rate
// and the first-message and gap histograms (classic in text, native in protobuf); a run
// without streams has none of them.
func TestMetricsStreams(t *testing.T) {
	m := newMetrics(Config{Kind: "run", Target: "grpc://127.0.0.1:1/p.S/M"})
	m.interval(streamedInterval())
	m.interval(streamedInterval())
	p := &exposition.Page{}
	m.write(p)
	page := string(p.Bytes())
	for _, want := range []string{
		"apiperf_streams_total 20\n", "apiperf_stream_messages_total 400\n", "apiperf_stream_message_rate 200\n",
		`apiperf_stream_first_message_seconds_bucket{le="0.1"} 18` + "\n",
		`apiperf_stream_first_message_seconds_bucket{le="0.25"} 20` + "\n",
		"apiperf_stream_first_message_seconds_count 20\n",
		`apiperf_stream_message_gap_seconds_bucket{le="0.005"} 0` + "\n", `apiperf_stream_message_gap_seconds_bucket{le="0.025"} 380` + "\n", "apiperf_stream_message_gap_seconds_count 380\n",
		"# TYPE apiperf_stream_first_message_seconds histogram\n",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, page)
		}
	}
	pp := exposition.NewProtoPage()
	m.write(pp)
	if !bytes.Contains(pp.Bytes(), []byte("apiperf_stream_message_gap_seconds")) {
		t.Errorf("the protobuf page has no apiperf_stream_message_gap_seconds family")
	}
	plain := newMetrics(Config{Kind: "run", Target: "http://127.0.0.1:1/"})
	plain.interval(testInterval(0, 10, false))
	p = &exposition.Page{}
	plain.write(p)
	if page := string(p.Bytes()); strings.Contains(page, "apiperf_stream") {
		t.Errorf("/metrics of a run without streams has stream series:\n%s", page)
	}
}

// TestHlogStreams: a streamed interval is logged with its first-message and gap histograms,
// tagged; an interval without streams has only its latency.
func TestHlogStreams(t *testing.T) {
	var b bytes.Buffer
	w := measure.NewHlogWriter(&b)
	if err := w.Begin(time.Unix(1700000000, 0)); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(testInterval(0, 10, false)); err != nil {
		t.Fatal(err)
	}
	plain := b.Len()
	if err := w.Write(streamedInterval()); err != nil {
		t.Fatal(err)
	}
	log := b.String()
	if strings.Contains(log[:plain], "\nTag=") {
		t.Errorf("an interval without streams was logged with tags:\n%s", log[:plain])
	}
	for _, want := range []string{"\nTag=first,0.000,1.000,200.", "\nTag=gap,0.000,1.000,10.0"} {
		if !strings.Contains(log[plain-1:], want) {
			t.Errorf("the log of a streamed interval lacks %q:\n%s", want, log[plain:])
		}
	}
}

// TestPagePointStreams: the live page's point of a streamed interval carries its stream
// figures (a time without a sample as null); a plain interval's has none.
func TestPagePointStreams(t *testing.T) {
	iv := streamedInterval()
	iv.Streams.Gap = measure.NewHistogram() // no gap ended in this interval
	b, err := json.Marshal(newPoint(Phase{}, iv, iv.StepStart))
	if err != nil {
		t.Fatal(err)
	}
	if want := `"stream":{"first_p50_ms":100.031,"first_p99_ms":200.063,"gap_p99_ms":null,"messages_per_s":200}`; !strings.Contains(string(b), want) {
		t.Errorf("point = %s\nwant it to contain %s", b, want)
	}
	if b, _ := json.Marshal(newPoint(Phase{}, testInterval(0, 10, false), time.Time{})); strings.Contains(string(b), `"stream"`) {
		t.Errorf("point of a plain interval = %s, want no stream", b)
	}
}

// openStreamedInterval is streamedInterval in open loop: every first message came 40 ms
// after its actual send.
func openStreamedInterval() *measure.Interval {
	iv := streamedInterval()
	iv.Streams.FirstUncorrected = measure.NewHistogram()
	iv.Streams.FirstUncorrected.RecordN(40*time.Millisecond, 10)
	return iv
}

// TestStreamsUncorrectedLive: an open-loop interval's time to first message from the actual
// send is in every live output that has the corrected one: the view's second streams line,
// the page's point (null without a sample), /metrics' uncorrected histogram and the .hlog's
// first_uncorrected tag; a closed loop's has none of them.
func TestStreamsUncorrectedLive(t *testing.T) {
	iv := openStreamedInterval()
	if out, want := render(Phase{}, iv, iv.Second(), nil, nil), "           first uncorrected p50 40.0ms  p99 40.0ms\n"; !strings.Contains(out, want) {
		t.Errorf("render() = \n%s\nwant the line %q", out, want)
	}
	b, _ := json.Marshal(newPoint(Phase{}, iv, iv.StepStart))
	if want := `"first_uncorrected_p50_ms":40.031,"first_uncorrected_p99_ms":40.031}`; !strings.Contains(string(b), want) {
		t.Errorf("point = %s\nwant it to contain %s", b, want)
	}
	iv.Streams.FirstUncorrected = measure.NewHistogram()
	if b, _ := json.Marshal(newPoint(Phase{}, iv, iv.StepStart)); !strings.Contains(string(b), `"first_uncorrected_p99_ms":null`) {
		t.Errorf("point of an open-loop interval without a first message = %s, want its uncorrected times null", b)
	}
	m := newMetrics(Config{Kind: "run", Target: "http://127.0.0.1:1/events"})
	m.interval(openStreamedInterval())
	p := &exposition.Page{}
	m.write(p)
	if page, want := string(p.Bytes()), `apiperf_stream_first_message_uncorrected_seconds_bucket{le="0.05"} 10`+"\n"; !strings.Contains(page, want) {
		t.Errorf("/metrics lacks %q:\n%s", want, page)
	}
	var log bytes.Buffer
	w := measure.NewHlogWriter(&log)
	w.Begin(time.Unix(1700000000, 0))
	if err := w.Write(openStreamedInterval()); err != nil || !strings.Contains(log.String(), "\nTag=first_uncorrected,0.000,1.000,40.0") {
		t.Errorf("the log of an open-loop streamed interval (%v) lacks its first_uncorrected histogram:\n%s", err, log.String())
	}
	closed := streamedInterval()
	b, _ = json.Marshal(newPoint(Phase{}, closed, closed.StepStart))
	m = newMetrics(Config{Kind: "run", Target: "http://127.0.0.1:1/events"})
	m.interval(closed)
	p = &exposition.Page{}
	m.write(p)
	if out := render(Phase{}, closed, closed.Second(), nil, nil); strings.Contains(out, "uncorrected") || strings.Contains(string(b), "uncorrected") ||
		strings.Contains(string(p.Bytes()), "first_message_uncorrected") {
		t.Errorf("a closed loop's interval shows an uncorrected time to first message: view\n%s\npoint %s", out, b)
	}
}
