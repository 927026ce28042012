package measure

import "time"

// IntervalStreams is what the streams of one interval measured: the streams that completed
// in it with their messages and times to first message (as Streams counts them, so the
// intervals of a step add up to its Streams exactly), and the gaps between messages that
// ended in it. An interval of a run without streams has none (nil).
type IntervalStreams struct {
	Streams  int64      `json:"streams"`  // streams complete in the interval, empty ones included
	Messages int64      `json:"messages"` // the messages of those streams
	First    *Histogram `json:"first"`    // their time to first message (open loop: from when due)
	Gap      *Histogram `json:"gap"`      // gaps between messages that ended in the interval
}

// MessageRate is messages per second of an interval of length d (of the streams complete in it).
func (s *IntervalStreams) MessageRate(d time.Duration) float64 {
	if s == nil || d <= 0 {
		return 0
	}
	return float64(s.Messages) / d.Seconds()
}

// Merge adds o's counts and histograms to s (o may be nil); a nil s becomes a copy of o.
func (s *IntervalStreams) Merge(o *IntervalStreams) *IntervalStreams {
	if o == nil {
		return s
	}
	if s == nil {
		return o.Clone()
	}
	s.Streams += o.Streams
	s.Messages += o.Messages
	s.First = mergeHist(s.First, o.First)
	s.Gap = mergeHist(s.Gap, o.Gap)
	return s
}

// Clone is a deep copy (nil for nil).
func (s *IntervalStreams) Clone() *IntervalStreams {
	if s == nil {
		return nil
	}
	c := *s
	if s.First != nil {
		c.First = s.First.Clone()
	}
	if s.Gap != nil {
		c.Gap = s.Gap.Clone()
	}
	return &c
}

// recStreams is the stream part of one recorder's interval; made at its first stream or gap.
type recStreams struct {
	streams, messages int64
	first, gap        *Histogram
}

func (rs *recStreams) reset() {
	rs.streams, rs.messages = 0, 0
	rs.first.reset()
	rs.gap.reset()
}

// stream returns iv's stream record, making it the first time.
func (iv *recInterval) stream() *recStreams {
	if iv.streams == nil {
		iv.streams = &recStreams{first: NewHistogram(), gap: NewHistogram()}
	}
	return iv.streams
}

// addStream counts the complete stream of s in iv, with its time to first message first (0: none).
func (iv *recInterval) addStream(s *Sample, first int64) {
	rs := iv.stream()
	rs.streams++
	rs.messages += int64(s.X.Messages)
	if first > 0 {
		rs.first.Record(time.Duration(first))
	}
}

// mergeStreams adds a recorder's interval streams to the emitted interval, taking its
// histograms from hist.
func (iv *Interval) mergeStreams(rs *recStreams, hist func() *Histogram) {
	if rs == nil {
		return
	}
	if iv.Streams == nil {
		iv.Streams = &IntervalStreams{First: hist(), Gap: hist()}
	}
	iv.Streams.Streams += rs.streams
	iv.Streams.Messages += rs.messages
	iv.Streams.First.Merge(rs.first)
	iv.Streams.Gap.Merge(rs.gap)
}
