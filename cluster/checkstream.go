package cluster

import "github.com/apiperf/apiperf/measure"

// checkIntervalStreams checks the streams of a worker's interval (nil: none): no more streams
// than the interval's responses, no more first messages than streams, every count within
// maxSize.
func checkIntervalStreams(what string, s *measure.IntervalStreams, requests, maxSize int64) error {
	if s == nil {
		return nil
	}
	if s.Streams < 0 || s.Streams > requests || s.Messages < 0 || s.Messages > maxSize {
		return forged("%s: %d streams of %d messages for %d responses", what, s.Streams, s.Messages, requests)
	}
	if s.First == nil || s.Gap == nil {
		return forged("%s: streams without their histograms", what)
	}
	if err := checkHistogram(what+" time to first message", s.First, s.First.Count(), maxSize, true); err != nil {
		return err
	}
	if n := s.First.Count(); n > s.Streams {
		return forged("%s: %d first messages for %d streams", what, n, s.Streams)
	}
	return checkHistogram(what+" gaps", s.Gap, s.Gap.Count(), maxSize, true)
}
