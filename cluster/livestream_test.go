package cluster

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/apiperf/apiperf/load"

	"github.com/apiperf/apiperf/measure"
)

// TestMergeIntervalsStreams: the live merge of workers' intervals adds their streams exactly
// (counts and histograms), keeps an interval without streams as it is, and changes none of
// its inputs.
func TestMergeIntervalsStreams(t *testing.T) {
	streamed := func(n int64, first time.Duration) *measure.Interval {
		iv := honestInterval(time.Now(), 0, n)
		iv.Streams = &measure.Streams{Streams: n, Messages: 3 * n, First: measure.NewHistogram(), Gap: measure.NewHistogram()}
		iv.Streams.First.RecordN(first, n)
		iv.Streams.Gap.RecordN(10*time.Millisecond, 2*n)
		return iv
	}
	a, b, plain := streamed(4, 100*time.Millisecond), streamed(6, 300*time.Millisecond), honestInterval(time.Now(), 0, 2)
	m := mergeIntervals([]*measure.Interval{a, plain, b})
	s := m.Streams
	if s == nil || s.Streams != 10 || s.Messages != 30 || s.First.Count() != 10 || s.Gap.Count() != 20 {
		t.Fatalf("merged streams %+v; want 10 streams, 30 messages, 10 first, 20 gaps", s)
	}
	if p := s.First.Percentile(50); p < 290*time.Millisecond {
		t.Errorf("merged p50 time to first message %v; want the larger worker's 300ms", p)
	}
	if a.Streams.Streams != 4 || a.Streams.First.Count() != 4 || b.Streams.Gap.Count() != 12 {
		t.Errorf("merging changed its inputs: %+v, %+v", a.Streams, b.Streams)
	}
	if m := mergeIntervals([]*measure.Interval{plain, plain}); m.Streams != nil {
		t.Errorf("merged intervals without streams have %+v", m.Streams)
	}
}

// eventServer answers every request with a text/event-stream of three events, 2 ms apart.
func eventServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 3 {
			if i > 0 {
				time.Sleep(2 * time.Millisecond)
			}
			fmt.Fprintf(w, "data: %d\n\n", i)
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestWorkerLostStreams kills one of two workers mid-run against an event stream: the step
// rebuilt from its intervals carries their stream figures, so the merged step counts every
// response's stream exactly (kind, streams, messages, fewest and most per stream, time to
// first event corrected and uncorrected), the lost worker's as far as it streamed them.
func TestWorkerLostStreams(t *testing.T) {
	srv := eventServer(t)
	run, midRun := streaming(Engine(io.Discard), 2)
	cl := startCluster(t, srv.URL, 2, run)
	go func() {
		select {
		case <-midRun:
			cl.stop[1]()
		case <-t.Context().Done():
		}
	}()
	step, err := cl.coord.Step(context.Background(), load.Config{Connections: 4, Threads: 1, Rate: 200, Duration: measure.Duration(4 * time.Second), Timeout: measure.Duration(time.Second)})
	if err != nil {
		t.Fatalf("Step: %v", err)
	}
	if len(cl.coord.Lost()) != 1 || !step.Interrupted {
		t.Fatalf("Lost() = %q, step.Interrupted = %v; want one worker lost and the step interrupted", cl.coord.Lost(), step.Interrupted)
	}
	var lostDid int64
	for _, r := range cl.coord.Workers() {
		if r.Lost != "" {
			lostDid = r.Responses
		}
	}
	s := step.Streams
	if s == nil || lostDid == 0 {
		t.Fatalf("merged step of %d responses (the lost worker's %d) has streams %+v; want them, and the lost worker's responses", step.Requests, lostDid, s)
	}
	got := struct{ streams, empty, messages, min, max, first, unc int64 }{s.Streams, s.Empty, s.Messages, s.MinMessages, s.MaxMessages, s.First.Count(), s.FirstUncorrected.Count()}
	n := step.Requests
	want := struct{ streams, empty, messages, min, max, first, unc int64 }{n, 0, 3 * n, 3, 3, n, n}
	if s.Kind != "sse" || got != want {
		t.Errorf("merged streams of %d responses (the lost worker's %d): kind %q, %+v; want sse, %+v", n, lostDid, s.Kind, got, want)
	}
	if g := s.Gap.Count(); g < n {
		t.Errorf("merged streams of %d responses of 3 events have %d gaps; want about 2 a stream", n, g)
	}
	t.Logf("%s; merged %d streams", cl.coord.Lost()[0], s.Streams)
}
