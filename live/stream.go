package live

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/apiperf/apiperf/exposition"
	"github.com/apiperf/apiperf/measure"
)

// streamMetrics is the Prometheus view of a streamed run's intervals (measure.Streams);
// nil in a run without streams.
type streamMetrics struct {
	streams, messages float64
	first, gap        *exposition.Histogram
	firstUncorrected  *exposition.Histogram // nil until an open-loop interval
	rate              float64               // messages per second of the last interval
}

// streamInterval adds the streams of iv; called with m.mu held.
func (m *metrics) streamInterval(iv *measure.Interval) {
	s := iv.Streams
	if s == nil {
		return
	}
	if m.streams == nil {
		m.streams = &streamMetrics{first: exposition.NewNativeHistogram(latencyBuckets), gap: exposition.NewNativeHistogram(latencyBuckets)}
	}
	sm := m.streams
	sm.streams += float64(s.Streams)
	sm.messages += float64(s.Messages)
	observe(sm.first, s.First)
	if s.FirstUncorrected != nil {
		if sm.firstUncorrected == nil {
			sm.firstUncorrected = exposition.NewNativeHistogram(latencyBuckets)
		}
		observe(sm.firstUncorrected, s.FirstUncorrected)
	}
	observe(sm.gap, s.Gap)
	sm.rate = s.MessageRate(iv.Length.Duration())
}

// writeStreams writes the stream families; called with m.mu held.
func (m *metrics) writeStreams(p *exposition.Page) {
	sm := m.streams
	if sm == nil {
		return
	}
	p.Metric("apiperf_streams_total", "Complete streams measured (gRPC server streams, server-sent event responses).", "counter", sm.streams)
	p.Metric("apiperf_stream_messages_total", "Messages (events) of the complete streams measured.", "counter", sm.messages)
	p.Metric("apiperf_stream_message_rate", "Messages per second of the streams complete in the last interval.", "gauge", sm.rate)
	p.Histogram("apiperf_stream_first_message_seconds",
		"Time to a stream's first message, from its send (open loop: from when it was due).", sm.first)
	if sm.firstUncorrected != nil {
		p.Histogram("apiperf_stream_first_message_uncorrected_seconds", "Open loop: time to a stream's first message from the actual send.", sm.firstUncorrected)
	}
	p.Histogram("apiperf_stream_message_gap_seconds", "Time between consecutive messages of a stream.", sm.gap)
}

// streamPoint is an interval's stream figures as the view and the live page show them:
// times in milliseconds (NaN: no sample in the interval), messages per second; in open loop
// (Open) the time to first message from the actual send too.
type streamPoint struct {
	FirstP50, FirstP99, GapP99 float64
	Rate                       float64
	Open                       bool
	UncorrectedP50             float64
	UncorrectedP99             float64
}

// newStreamPoint returns the stream figures of iv; nil without streams.
func newStreamPoint(iv *measure.Interval) *streamPoint {
	s := iv.Streams
	if s == nil {
		return nil
	}
	ms := func(h *measure.Histogram, p float64) float64 {
		if h == nil || h.Count() == 0 {
			return math.NaN()
		}
		return float64(h.Percentile(p)) / float64(time.Millisecond)
	}
	p := &streamPoint{FirstP50: ms(s.First, 50), FirstP99: ms(s.First, 99), GapP99: ms(s.Gap, 99), Rate: s.MessageRate(iv.Length.Duration())}
	if s.FirstUncorrected != nil {
		p.Open, p.UncorrectedP50, p.UncorrectedP99 = true, ms(s.FirstUncorrected, 50), ms(s.FirstUncorrected, 99)
	}
	return p
}

// MarshalJSON writes a time without a sample as null; the uncorrected times only in open loop.
func (p *streamPoint) MarshalJSON() ([]byte, error) {
	v := func(x float64) *float64 {
		if math.IsNaN(x) {
			return nil
		}
		return &x
	}
	var uncP50, uncP99 any // nil: left out (closed loop); a nil *float64: null
	if p.Open {
		uncP50, uncP99 = v(p.UncorrectedP50), v(p.UncorrectedP99)
	}
	return json.Marshal(struct {
		FirstP50 *float64 `json:"first_p50_ms"`
		FirstP99 *float64 `json:"first_p99_ms"`
		GapP99   *float64 `json:"gap_p99_ms"`
		Rate     float64  `json:"messages_per_s"`
		UncP50   any      `json:"first_uncorrected_p50_ms,omitempty"`
		UncP99   any      `json:"first_uncorrected_p99_ms,omitempty"`
	}{v(p.FirstP50), v(p.FirstP99), v(p.GapP99), p.Rate, uncP50, uncP99})
}

// streamLine is the view's line for the streams of iv ("" without streams): the interval's
// time to first message (p50, p99), its p99 gap and its messages per second; in open loop a
// second line with the time to first message from the actual send.
func streamLine(iv *measure.Interval) string {
	p := newStreamPoint(iv)
	if p == nil {
		return ""
	}
	ms := func(v float64) string {
		if math.IsNaN(v) {
			return "-"
		}
		return fmtMs(v)
	}
	line := fmt.Sprintf("  streams  first p50 %s  p99 %s  gap p99 %s  msg/s %s\n", ms(p.FirstP50), ms(p.FirstP99), ms(p.GapP99), fmtNum(p.Rate))
	if p.Open {
		line += fmt.Sprintf("           first uncorrected p50 %s  p99 %s\n", ms(p.UncorrectedP50), ms(p.UncorrectedP99))
	}
	return line
}
