package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/apiperf/apiperf/measure"
)

// ServerTimingLines writes one line per Server-Timing metric of s, e.g.
// "Server-Timing db: p50 2.00ms, p90 2.00ms, p99 32.00ms, max 32.00ms (12345 responses)",
// then what the metrics leave unaccounted and how many malformed metrics were skipped.
func ServerTimingLines(w io.Writer, s *measure.Step) error {
	return render(w, "the Server-Timing lines", func(w io.Writer) { serverTimingLines(w, s) })
}

func serverTimingLines(w io.Writer, s *measure.Step) {
	st := s.ServerTiming
	if st == nil {
		return
	}
	for _, m := range st.Metrics {
		h := m.Histogram
		fmt.Fprintf(w, "  Server-Timing %s: p50 %s, p90 %s, p99 %s, max %s (%d responses)\n", m.Name,
			FormatDuration(h.Percentile(50)), FormatDuration(h.Percentile(90)), FormatDuration(h.Percentile(99)),
			FormatDuration(h.Max()), m.Responses)
	}
	if u := st.Unaccounted; u != nil && u.Count() > 0 {
		fmt.Fprintf(w, "  Not in Server-Timing (latency minus the metrics' sum: network, queueing, untimed work): p50 %s, p90 %s, p99 %s (%d responses)\n",
			FormatDuration(u.Percentile(50)), FormatDuration(u.Percentile(90)), FormatDuration(u.Percentile(99)), st.Responses)
	}
	if st.Malformed > 0 || st.Dropped > 0 {
		fmt.Fprintf(w, "  Server-Timing: %d malformed metrics skipped, %d past the limits dropped\n", st.Malformed, st.Dropped)
	}
}

// ExemplarLines writes the step's slowest requests, slowest first, and one request per
// latency band (wrk's --latency asks for them).
func ExemplarLines(w io.Writer, s *measure.Step) error {
	return render(w, "the slowest requests", func(w io.Writer) { exemplarLines(w, s) })
}

func exemplarLines(w io.Writer, s *measure.Step) {
	x := s.Exemplars
	if x == nil || len(x.Slowest) == 0 {
		return
	}
	open := s.Open != nil
	fmt.Fprintf(w, "  Slowest %d requests (of %d responses):\n", len(x.Slowest), s.Requests)
	for _, e := range x.Slowest {
		fmt.Fprintf(w, "    %s\n", exemplarText(e, open))
	}
	if len(x.Bands) > 0 {
		fmt.Fprintln(w, "  One request per latency band:")
		for _, b := range x.Bands {
			fmt.Fprintf(w, "    %-6s %s\n", BandName(b.Percentile), exemplarText(b.Exemplar, open))
		}
	}
}

// BandName names a latency band: "p50", "p99.9".
func BandName(p float64) string { return "p" + strconv.FormatFloat(p, 'f', -1, 64) }

// exemplarText is one request on a line: latency (open loop: and uncorrected), status, when
// it started in the window, its connection, endpoint and trace id.
func exemplarText(e measure.Exemplar, open bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%9s", FormatDuration(e.Latency.Duration()))
	if open {
		fmt.Fprintf(&b, " (uncorrected %s)", FormatDuration(e.Uncorrected.Duration()))
	}
	fmt.Fprintf(&b, "  status %d  at %s  conn %d", e.Status, FormatDuration(e.Start.Duration()), e.Conn)
	if e.Endpoint != "" {
		fmt.Fprintf(&b, "  %s", e.Endpoint)
	}
	if !e.Trace.IsZero() {
		fmt.Fprintf(&b, "  trace %s", e.Trace)
	}
	if len(e.Timing) > 0 {
		fmt.Fprintf(&b, "  (%s)", timingText(e.Timing))
	}
	return b.String()
}

// timingText is a response's Server-Timing: "db 60.03ms, app 500.00us".
func timingText(ts []measure.MetricDur) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.Name + " " + FormatDuration(t.Dur.Duration())
	}
	return strings.Join(parts, ", ")
}
