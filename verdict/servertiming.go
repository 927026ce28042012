package verdict

import (
	"fmt"
	"strings"
	"time"

	"github.com/apiperf/apiperf/measure"
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

// serverTimingClaim reads the Server-Timing of the peak level (or, without one there, of the
// last level that has it). Its summary decomposes the request kept at p99 by its own
// Server-Timing ("p99 is 32 ms, of which db 30 ms"), and the slowest requests say how often
// that metric took most of their time; without kept requests (older runs) it compares the
// percentiles of the metrics with the latency's, which come from different requests.
func serverTimingClaim(j *judgement) *Claim {
	in := j.in
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
	if l.P99 <= 0 || st.Largest(99) == nil {
		return nil
	}
	var parts []string
	for _, m := range st.Metrics {
		parts = append(parts, fmt.Sprintf("%s %s", m.Name, dur(m.Histogram.Percentile(99))))
	}
	ev := []string{fmt.Sprintf("at %s: latency p99 %s; Server-Timing p99 over all responses: %s (%s of %s attempts sent it)",
		l.Label, dur(l.P99), strings.Join(parts, ", "), num(float64(st.Responses)), num(float64(l.Attempts)))}
	name, part, whole, dominant := tailPart(l)
	if slow := slowestIn(l.Exemplars, name); slow != "" {
		ev = append(ev, slow)
	}
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
	head := fmt.Sprintf("p99 is %s, of which %s %s (%s, by the target's Server-Timing)", dur(l.P99), name, dur(min(part, l.P99)), whole)
	if dominant {
		c.Summary = head + ": the tail is in " + name
		c.Fix = fmt.Sprintf("look at what %s does in the slowest requests (their trace ids are in the report with --traceparent)", name)
	} else {
		c.Summary = head + ": most of the tail is outside what the server times (network, queueing, untimed work)"
		c.Fix = "time more of the request in Server-Timing (queueing before the handler, middleware), or look at the slowest requests' traces"
		// On a machine whose CPUs others held, the untimed part holds the waits for a CPU:
		// more instrumentation would time them too, not explain them.
		if m := j.machineAt(at); in.SameMachine && m != nil && (m.Full || m.Shared) && m.Others+m.Steal >= j.t.OthersCores {
			c.Summary += fmt.Sprintf("; other processes took %.2f cores at %s, so much of the untimed part may be waits for a CPU", m.Others+m.Steal, m.Label)
			c.Evidence = append(c.Evidence, sharedNote(m))
			c.Fix = "measure again on a machine the target has to itself (here the untimed part held waits for a CPU); then, if it stays, time more of the request in Server-Timing"
		}
	}
	return c
}

// tailPart is the largest Server-Timing metric of the request kept at p99 and whether it
// took at least timingDominant of that request's latency; without one, the metric with the
// largest p99 over all responses compared with the latency's p99.
func tailPart(l Level) (name string, part time.Duration, whole string, dominant bool) {
	if x := l.Exemplars; x != nil {
		for _, b := range x.Bands {
			if b.Percentile != 99 {
				continue
			}
			if m, ok := b.Exemplar.Largest(); ok {
				lat := b.Exemplar.Latency.Duration()
				return m.Name, m.Dur.Duration(), "the request at p99 took " + dur(lat),
					float64(m.Dur) >= timingDominant*float64(lat)
			}
		}
	}
	top := l.ServerTiming.Largest(99)
	p := top.Histogram.Percentile(99)
	return top.Name, p, "its p99 over all responses", float64(p) >= timingDominant*float64(l.P99)
}

// slowestIn says in how many of the slowest requests metric took most of the time.
func slowestIn(x *measure.Exemplars, metric string) string {
	if x == nil || len(x.Slowest) == 0 {
		return ""
	}
	n, timed := 0, 0
	for _, e := range x.Slowest {
		m, ok := e.Largest()
		if !ok {
			continue
		}
		timed++
		if m.Name == metric && float64(m.Dur) >= timingDominant*float64(e.Latency) {
			n++
		}
	}
	if timed == 0 {
		return ""
	}
	return fmt.Sprintf("%s took most of the time in %d of the %d slowest requests that sent Server-Timing (slowest %s: %s)",
		metric, n, timed, dur(x.Slowest[0].Latency.Duration()), timings(x.Slowest[0].Timing))
}

func timings(ts []measure.MetricDur) string {
	var parts []string
	for _, t := range ts {
		parts = append(parts, t.Name+" "+dur(t.Dur.Duration()))
	}
	return strings.Join(parts, ", ")
}
