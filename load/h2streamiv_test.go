package load

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
)

// TestStreamIntervals: a run of server-sent events over HTTP/2 in 100 ms intervals carries
// its streams in the intervals: their streams, messages, times to first event and gaps add
// up exactly to the step's Streams, and the gaps come in the intervals they ended in (many
// intervals have some, not only the last).
func TestStreamIntervals(t *testing.T) {
	srv, _ := goH2Server(t, false, sseHandler(6, 30*time.Millisecond, 20*time.Millisecond))
	src, _ := scenario.NewStatic(scenario.Scenario{URL: srv.URL + "/events"})
	tg, _ := scenario.ParseTarget(srv.URL + "/events")
	cfg := Config{Connections: 2, Threads: 2, Streams: 2, HTTP2: true, Duration: measure.Duration(1200 * time.Millisecond),
		Timeout: measure.Duration(2 * time.Second)}
	var ivs []*measure.Interval
	step, err := Run(context.Background(), cfg, src, tg, withInterval(100*time.Millisecond),
		WithIntervals(func(iv *measure.Interval) { ivs = append(ivs, iv) }))
	if err != nil {
		t.Fatal(err)
	}
	st := step.Streams
	if st == nil || st.Streams == 0 {
		t.Fatalf("no streams recorded (responses %d, errors %+v)", step.Requests, step.Errors)
	}
	var sum *measure.Streams
	withGaps := 0
	for _, iv := range ivs {
		if iv.Streams != nil && iv.Streams.Gap.Count() > 0 {
			withGaps++
		}
		sum = sum.Merge(iv.Streams)
	}
	if sum == nil {
		t.Fatalf("none of %d intervals has streams; the step has %s", len(ivs), st)
	}
	if sum.Kind != "sse" || sum.MinMessages != st.MinMessages || sum.MaxMessages != st.MaxMessages || sum.Empty != st.Empty {
		t.Errorf("intervals add up to kind %q, %d empty, %d to %d events a stream; the step has sse, %d, %d to %d",
			sum.Kind, sum.Empty, sum.MinMessages, sum.MaxMessages, st.Empty, st.MinMessages, st.MaxMessages)
	}
	if sum.Streams != st.Streams || sum.Messages != st.Messages || !sum.First.Equal(st.First) || !sum.Gap.Equal(st.Gap) {
		t.Errorf("intervals add up to %d streams, %d events, %d first, %d gaps; the step has %d, %d, %d, %d",
			sum.Streams, sum.Messages, sum.First.Count(), sum.Gap.Count(), st.Streams, st.Messages, st.First.Count(), st.Gap.Count())
	}
	if withGaps < len(ivs)/2 {
		t.Errorf("%d of %d intervals have gaps; want most of them (a gap counts where it ended)", withGaps, len(ivs))
	}
}

// TestIntervalsWithoutStreamsH2: plain responses over HTTP/2 leave the intervals without streams.
func TestIntervalsWithoutStreamsH2(t *testing.T) {
	srv, _ := goH2Server(t, false, nil)
	src, _ := scenario.NewStatic(scenario.Scenario{URL: srv.URL})
	tg, _ := scenario.ParseTarget(srv.URL)
	_, err := Run(context.Background(), Config{Connections: 2, Threads: 1, HTTP2: true, Requests: 200, Timeout: measure.Duration(2 * time.Second)}, src, tg,
		WithIntervals(func(iv *measure.Interval) {
			if iv.Streams != nil {
				t.Errorf("interval %d of plain responses has streams %+v", iv.Index, iv.Streams)
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
}

// TestStreamIntervalsOpenLoop: in open loop above what one connection can start, each
// interval carries the time to first event from the actual send (uncorrected) beside the
// corrected one; the intervals add up exactly to the step's, and in the last interval with
// streams the corrected view has grown with the backlog while the uncorrected one has not.
func TestStreamIntervalsOpenLoop(t *testing.T) {
	srv := httptest.NewServer(sseHandler(2, 20*time.Millisecond, 5*time.Millisecond))
	defer srv.Close()
	src, _ := scenario.NewStatic(scenario.Scenario{URL: srv.URL + "/events"})
	tg, _ := scenario.ParseTarget(srv.URL + "/events")
	cfg := Config{Connections: 1, MaxConnections: 1, Threads: 1, Rate: 100, Requests: 30, Timeout: measure.Duration(5 * time.Second)}
	var ivs []*measure.Interval
	step, err := Run(context.Background(), cfg, src, tg, withInterval(200*time.Millisecond),
		WithIntervals(func(iv *measure.Interval) { ivs = append(ivs, iv) }))
	if err != nil {
		t.Fatal(err)
	}
	st := step.Streams
	if st == nil || st.FirstUncorrected == nil || st.Streams != 30 {
		t.Fatalf("step streams %+v of %d responses; want 30 streams with an uncorrected view", st, step.Requests)
	}
	var sum *measure.Streams
	var last *measure.Streams
	for _, iv := range ivs {
		if s := iv.Streams; s != nil {
			if s.FirstUncorrected == nil {
				t.Fatalf("open-loop interval %d has streams without the uncorrected time to first event", iv.Index)
			}
			if s.FirstUncorrected.Count() > 0 {
				last = s
			}
		}
		sum = sum.Merge(iv.Streams)
	}
	if sum == nil || !sum.FirstUncorrected.Equal(st.FirstUncorrected) || !sum.First.Equal(st.First) {
		t.Fatalf("intervals' times to first event (%v) do not add up to the step's (%d corrected, %d uncorrected)", sum, st.First.Count(), st.FirstUncorrected.Count())
	}
	if c, u := last.First.Percentile(50), last.FirstUncorrected.Percentile(50); u < 20*time.Millisecond || c < 3*u {
		t.Errorf("last interval's time to first event p50: corrected %v, uncorrected %v; want the uncorrected at least the server's 20ms and the corrected several times it", c, u)
	}
}
