package cluster

import "github.com/apiperf/apiperf/measure"

// checkIntervalStreams checks the streams of a worker's interval (nil: none), which a lost
// worker's rebuilt step is made of: a known kind, no more streams than the interval's
// responses, no more empty streams than streams, fewest and most messages of a stream within
// its messages, no more first messages (corrected or not) than streams with a message, every
// count within maxSize.
func checkIntervalStreams(what string, s *measure.Streams, requests, maxSize int64) error {
	if s == nil {
		return nil
	}
	if s.Kind != "" && s.Kind != "grpc" && s.Kind != "sse" {
		return forged("%s: streams of kind %q", what, Printable(s.Kind, 20))
	}
	if s.Streams < 0 || s.Streams > requests || s.Messages < 0 || s.Messages > maxSize {
		return forged("%s: %d streams of %d messages for %d responses", what, s.Streams, s.Messages, requests)
	}
	if s.Empty < 0 || s.Empty > s.Streams || s.MinMessages < 0 || s.MinMessages > s.MaxMessages || s.MaxMessages > s.Messages {
		return forged("%s: %d streams (%d empty) of %d messages, %d to %d per stream", what, s.Streams, s.Empty, s.Messages, s.MinMessages, s.MaxMessages)
	}
	if s.First == nil || s.Gap == nil {
		return forged("%s: streams without their histograms", what)
	}
	for _, h := range []struct {
		name string
		h    *measure.Histogram
	}{{" time to first message", s.First}, {" uncorrected time to first message", s.FirstUncorrected}} {
		if h.h == nil {
			continue
		}
		if err := checkHistogram(what+h.name, h.h, h.h.Count(), maxSize, true); err != nil {
			return err
		}
		if n := h.h.Count(); n > s.Streams-s.Empty {
			return forged("%s: %d first messages for %d streams, %d of them empty", what, n, s.Streams, s.Empty)
		}
	}
	return checkHistogram(what+" gaps", s.Gap, s.Gap.Count(), maxSize, true)
}
