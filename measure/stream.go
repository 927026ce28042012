package measure

import (
	"fmt"
	"time"
)

// Streams is what a step (or one interval of it: Interval.Streams) of streamed responses
// measured, stream by stream: gRPC server streams (messages) or text/event-stream responses
// (events). A stream's whole duration is the step's Latency (to its last byte); Streams adds
// what happens inside it. An interval counts the streams complete in it and the gaps that
// ended in it, so the intervals of a step merge exactly to its Streams.
type Streams struct {
	Kind        string `json:"kind"`         // "grpc" (server-streaming messages) or "sse" (server-sent events)
	Streams     int64  `json:"streams"`      // complete streams (responses), empty ones included
	Empty       int64  `json:"empty"`        // of them, streams that ended without a message
	Messages    int64  `json:"messages"`     // messages (events) in the complete streams
	MinMessages int64  `json:"min_messages"` // fewest messages in one stream
	MaxMessages int64  `json:"max_messages"` // most messages in one stream
	// First is the time to a stream's first message, from when it was sent (open loop: from
	// when it was due, corrected); FirstUncorrected (open loop only) is from the actual send.
	First            *Histogram `json:"first"`
	FirstUncorrected *Histogram `json:"first_uncorrected,omitempty"`
	// Gap is the time between consecutive messages of a stream, of every stream (a stream that
	// failed later included), each gap one sample.
	Gap *Histogram `json:"gap"`
}

// newStreams returns an empty record; open keeps the uncorrected view.
func newStreams(open bool) *Streams {
	s := &Streams{First: NewHistogram(), Gap: NewHistogram()}
	if open {
		s.FirstUncorrected = NewHistogram()
	}
	return s
}

// addStream records the stream of response s (s.X.Stream set), in the totals and in its
// interval iv.
func (r *Recorder) addStream(s *Sample, iv *recInterval) {
	if r.streams == nil {
		r.streams = newStreams(r.open)
	}
	r.streams.add(s)
	iv.stream().add(s)
}

// add counts the complete stream of response s.
func (st *Streams) add(s *Sample) {
	st.Streams++
	n := int64(s.X.Messages)
	st.Messages += n
	if st.Streams == 1 || n < st.MinMessages {
		st.MinMessages = n
	}
	st.MaxMessages = max(st.MaxMessages, n)
	if n == 0 {
		st.Empty++
		return
	}
	first := s.X.First
	st.First.Record(time.Duration(first))
	if st.FirstUncorrected != nil {
		st.FirstUncorrected.Record(time.Duration(first - (s.Latency - s.Uncorrected)))
	}
}

// AddGaps records gaps between messages of streams (nanoseconds), handed over in batches by
// the connection that saw them (which leaves out gaps that ended in the warmup); ends[i] is
// when gap i ended (since the step's start), the interval it counts in.
func (r *Recorder) AddGaps(ends, gaps []int64) {
	if len(gaps) == 0 {
		return
	}
	r.mu.Lock()
	if r.streams == nil {
		r.streams = newStreams(r.open)
	}
	for i, g := range gaps {
		r.streams.Gap.Record(time.Duration(g))
		r.interval(ends[i] - r.from).stream().Gap.Record(time.Duration(g))
	}
	r.mu.Unlock()
}

// Merge adds o's streams to s (either may be nil; a nil s becomes a copy of o): a step's
// workers, or the intervals of a step (measure's IntervalStream, scale-out's rebuilt step).
func (s *Streams) Merge(o *Streams) *Streams {
	if o == nil {
		return s
	}
	if s == nil {
		return o.Clone()
	}
	if s.Kind == "" {
		s.Kind = o.Kind
	}
	if o.Streams > 0 && (s.Streams == 0 || o.MinMessages < s.MinMessages) {
		s.MinMessages = o.MinMessages
	}
	s.MaxMessages = max(s.MaxMessages, o.MaxMessages)
	s.Streams += o.Streams
	s.Empty += o.Empty
	s.Messages += o.Messages
	s.First = mergeHist(s.First, o.First)
	s.FirstUncorrected = mergeHist(s.FirstUncorrected, o.FirstUncorrected)
	s.Gap = mergeHist(s.Gap, o.Gap)
	return s
}

// Clone is a deep copy (nil for nil).
func (s *Streams) Clone() *Streams {
	if s == nil {
		return nil
	}
	c := *s
	c.First, c.FirstUncorrected, c.Gap = s.First.Clone(), s.FirstUncorrected.Clone(), s.Gap.Clone()
	return &c
}

// MessageRate is messages per second over d (an interval's length: of the streams complete in it).
func (s *Streams) MessageRate(d time.Duration) float64 {
	if s == nil || d <= 0 {
		return 0
	}
	return float64(s.Messages) / d.Seconds()
}

// Noun is what the streams carry: "message" (gRPC) or "event" (SSE).
func (s *Streams) Noun() string {
	if s.Kind == "sse" {
		return "event"
	}
	return "message"
}

// String says how many streams and messages, e.g. "40 complete, 200 messages, 5.0 per stream (min 5, max 5)".
func (s *Streams) String() string {
	per := 0.0
	if s.Streams > 0 {
		per = float64(s.Messages) / float64(s.Streams)
	}
	str := fmt.Sprintf("%d complete, %d %ss, %.1f per stream (min %d, max %d)", s.Streams, s.Messages, s.Noun(), per, s.MinMessages, s.MaxMessages)
	if s.Empty > 0 {
		str += fmt.Sprintf("; %d without any %s", s.Empty, s.Noun())
	}
	return str
}
