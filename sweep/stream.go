package sweep

import (
	"strings"

	"github.com/apiperf/apiperf/measure"
)

// StreamLevel is a level's figures of its streamed responses (gRPC server streams, SSE),
// pooled over its repetitions as latency is: percentiles of every stream's time to first
// message (corrected, as the level's latency) and of every gap between messages.
type StreamLevel struct {
	Streams  int64            `json:"streams"`
	Messages int64            `json:"messages"`
	FirstP50 measure.Duration `json:"first_p50"`
	FirstP90 measure.Duration `json:"first_p90"`
	FirstP99 measure.Duration `json:"first_p99"`
	GapP50   measure.Duration `json:"gap_p50"`
	GapP90   measure.Duration `json:"gap_p90"`
	GapP99   measure.Duration `json:"gap_p99"`
}

// streamMetrics are the stream latencies an objective may bound ("first_p99<=200ms").
var streamMetrics = []string{"first_p50", "first_p90", "first_p99", "gap_p50", "gap_p90", "gap_p99"}

// isStreamMetric reports whether m is one of streamMetrics.
func isStreamMetric(m string) bool {
	return strings.HasPrefix(m, "first_") || strings.HasPrefix(m, "gap_")
}

// reduceStreams pools the streams of the repetitions steps[idx]; nil when none had any.
func reduceStreams(steps []*measure.Step, idx []int) *StreamLevel {
	var st *measure.Streams
	for _, j := range idx {
		st = st.Merge(steps[j].Streams)
	}
	if st == nil {
		return nil
	}
	p := func(h *measure.Histogram, q float64) measure.Duration { return measure.Duration(h.Percentile(q)) }
	return &StreamLevel{Streams: st.Streams, Messages: st.Messages,
		FirstP50: p(st.First, 50), FirstP90: p(st.First, 90), FirstP99: p(st.First, 99),
		GapP50: p(st.Gap, 50), GapP90: p(st.Gap, 90), GapP99: p(st.Gap, 99)}
}

// percentile is the stream latency named like an objective's metric ("first_p99").
func (s *StreamLevel) percentile(metric string) measure.Duration {
	switch metric {
	case "first_p50":
		return s.FirstP50
	case "first_p90":
		return s.FirstP90
	case "first_p99":
		return s.FirstP99
	case "gap_p50":
		return s.GapP50
	case "gap_p90":
		return s.GapP90
	case "gap_p99":
		return s.GapP99
	}
	return 0
}
