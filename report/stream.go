package report

import (
	"fmt"
	"io"

	"github.com/apiperf/apiperf/measure"
)

// streamLines are the summary's lines of a step of streamed responses: how many streams and
// messages, the time to the first message (corrected and, in open loop, uncorrected) and the
// gaps between messages. A stream's duration is the Latency line above (to its last byte).
func streamLines(w io.Writer, s *measure.Step) {
	st := s.Streams
	if st == nil {
		return
	}
	kind := "gRPC server streams"
	if st.Kind == "sse" {
		kind = "server-sent events"
	}
	noun := st.Noun()
	fmt.Fprintf(w, "  Streams (%s): %s; duration is the Latency above\n", kind, st)
	view := ""
	if st.FirstUncorrected != nil {
		view = ", corrected"
	}
	fmt.Fprintf(w, "    Time to first %s%s: %s\n", noun, view, percentiles(st.First))
	if st.FirstUncorrected != nil {
		fmt.Fprintf(w, "    Time to first %s, uncorrected: %s\n", noun, percentiles(st.FirstUncorrected))
	}
	fmt.Fprintf(w, "    Gap between %ss: %s\n", noun, percentiles(st.Gap))
}

// percentiles is "p50 1.00ms, p90 2.00ms, p99 3.00ms, max 4.00ms" (or "none").
func percentiles(h *measure.Histogram) string {
	if h == nil || h.Count() == 0 {
		return "none"
	}
	return fmt.Sprintf("p50 %s, p90 %s, p99 %s, max %s", FormatDuration(h.Percentile(50)), FormatDuration(h.Percentile(90)),
		FormatDuration(h.Percentile(99)), FormatDuration(h.Max()))
}
