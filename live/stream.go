package live

import (
	"fmt"
	"time"

	"github.com/apiperf/apiperf/exposition"
	"github.com/apiperf/apiperf/measure"
)

// streamMetrics is the Prometheus view of a streamed run's intervals (measure.IntervalStreams);
// nil in a run without streams.
type streamMetrics struct {
	streams, messages float64
	first, gap        *exposition.Histogram
	rate              float64 // messages per second of the last interval
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
	p.Histogram("apiperf_stream_message_gap_seconds", "Time between consecutive messages of a stream.", sm.gap)
}

// streamLine is the view's line for the streams of iv ("" without streams): the interval's
// time to first message (p50, p99), its p99 gap and its messages per second.
func streamLine(iv *measure.Interval) string {
	s := iv.Streams
	if s == nil {
		return ""
	}
	ms := func(h *measure.Histogram, p float64) string {
		if h == nil || h.Count() == 0 {
			return "-"
		}
		return fmtMs(float64(h.Percentile(p)) / float64(time.Millisecond))
	}
	return fmt.Sprintf("  streams  first p50 %s  p99 %s  gap p99 %s  msg/s %s\n",
		ms(s.First, 50), ms(s.First, 99), ms(s.Gap, 99), fmtNum(s.MessageRate(iv.Length.Duration())))
}
