package cluster

import (
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
)

// TestMergeIntervalsStreams: the live merge of workers' intervals adds their streams exactly
// (counts and histograms), keeps an interval without streams as it is, and changes none of
// its inputs.
func TestMergeIntervalsStreams(t *testing.T) {
	streamed := func(n int64, first time.Duration) *measure.Interval {
		iv := honestInterval(time.Now(), 0, n)
		iv.Streams = &measure.IntervalStreams{Streams: n, Messages: 3 * n, First: measure.NewHistogram(), Gap: measure.NewHistogram()}
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
