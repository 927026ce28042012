package load

import (
	"context"
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
