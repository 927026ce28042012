package verdict

import (
	"fmt"
	"strings"
)

// ServerTimed says how much of the tail latency the target's own Server-Timing accounts for,
// and in which metric.
const ServerTimed Kind = "server-timing"

// Thresholds of the Server-Timing claim.
const (
	// timingDominant: a metric whose p99 is at least this share of the client's p99 is where
	// the tail is.
	timingDominant = 0.5
	// timingCoverage: below this share of responses sending the metric, the claim is low.
	timingCoverage = 0.9
	// timingMinResponses: fewer responses with Server-Timing make a p99 too thin for more
	// than low confidence.
	timingMinResponses = 1000
)

// serverTimingClaim reads the Server-Timing of the peak level (or, without one there, of
// the last level that has it): "p99 is 32 ms, of which db 30 ms". Percentiles of a metric
// and of the latency come from different requests, so the claim compares tails, not one
// request's parts; the slowest requests' trace ids are what to look at next.
func serverTimingClaim(in Input) *Claim {
	at := -1
	for i, l := range in.Levels {
		if l.ServerTiming == nil || len(l.ServerTiming.Metrics) == 0 {
			continue
		}
		at = i
		if i == in.Peak {
			break
		}
	}
	if at < 0 {
		return nil
	}
	l := in.Levels[at]
	st := l.ServerTiming
	top := st.Largest(99)
	if top == nil || l.P99 <= 0 {
		return nil
	}
	topP99 := top.Histogram.Percentile(99)
	var parts []string
	for _, m := range st.Metrics {
		parts = append(parts, fmt.Sprintf("%s %s", m.Name, dur(m.Histogram.Percentile(99))))
	}
	ev := []string{fmt.Sprintf("at %s: latency p99 %s; Server-Timing p99: %s (%s of %s attempts sent it)",
		l.Label, dur(l.P99), strings.Join(parts, ", "), num(float64(st.Responses)), num(float64(l.Attempts)))}
	if u := st.Unaccounted; u != nil && u.Count() > 0 {
		ev = append(ev, fmt.Sprintf("not in Server-Timing (latency minus the metrics, per response): p50 %s, p99 %s",
			dur(u.Percentile(50)), dur(u.Percentile(99))))
	}
	if st.Malformed > 0 {
		ev = append(ev, fmt.Sprintf("%s malformed Server-Timing metrics skipped", num(float64(st.Malformed))))
	}
	conf := Medium
	if st.Responses < timingMinResponses || float64(st.Responses) < timingCoverage*float64(l.Attempts) {
		conf = Low
	}
	c := &Claim{Kind: ServerTimed, Confidence: conf, Level: l.Label, Evidence: ev}
	head := fmt.Sprintf("p99 is %s, of which %s %s (the target's Server-Timing)", dur(l.P99), top.Name, dur(min(topP99, l.P99)))
	if float64(topP99) >= timingDominant*float64(l.P99) {
		c.Summary = head + ": the tail is in " + top.Name
		c.Fix = fmt.Sprintf("look at what %s does in the slowest requests (their trace ids are in the report with --traceparent)", top.Name)
	} else {
		c.Summary = head + ": most of the tail is outside what the server times (network, queueing, untimed work)"
		c.Fix = "time more of the request in Server-Timing (queueing before the handler, middleware), or look at the slowest requests' traces"
	}
	return c
}
