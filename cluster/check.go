package cluster

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
)

// What the coordinator tolerates in what a worker reports, besides exact consistency.
const (
	// clockSlack is how far a worker's times may stray from the coordinator's view of the
	// step (on top of the round trip): clock-sync error and send delays.
	clockSlack = 2 * time.Second
	// stepGraceDefault is how long after a step's planned end (start, phase, warmup, duration and
	// the drain of its timeout) a worker's final step may still arrive; then it is lost.
	stepGraceDefault = 10 * time.Second
	// perConnectionRate bounds what one connection (or stream) can complete: one response
	// a microsecond, far beyond any real network.
	perConnectionRate = 1e6
	maxWarnings       = 64
	maxWarning        = 512
	maxEndpoints      = scenario.MaxEndpoints + 1
	maxStatus         = 1000
)

// errForged marks a message that breaks the plan or does not add up: its worker is
// dropped, never merged.
var errForged = errors.New("sent a report that breaks the plan")

// forged is an errForged naming what was wrong.
func forged(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errForged, fmt.Sprintf(format, args...))
}

// limits are the bounds of one worker's report in one step, derived from its share.
type limits struct {
	share   load.Config
	start   time.Time     // the worker's planned start, coordinator clock (common start + phase)
	offset  time.Duration // worker clock minus coordinator clock
	slack   time.Duration
	maxSize int64 // any count or byte total: sums over the workers cannot overflow int64
}

func newLimits(m *member, workers int, start time.Time) limits {
	return limits{share: m.share, start: start.Add(m.phase), offset: m.offset,
		slack: clockSlack + 2*m.rtt, maxSize: math.MaxInt64 / 16 / int64(max(workers, 1))}
}

// deadline is when the worker's final step must have arrived (zero: a count-bounded share
// without a duration, bounded by progress instead).
func (l limits) deadline() time.Time {
	if l.share.Duration <= 0 {
		return time.Time{}
	}
	return l.start.Add(time.Duration(l.share.Warmup + l.share.Duration + l.share.Timeout)).Add(stepGrace + l.slack)
}

// attempts is the most attempts the share can make in a window open for elapsed.
func (l limits) attempts(elapsed time.Duration) int64 {
	s := l.share
	if s.Requests > 0 && s.Duration == 0 {
		return s.Requests
	}
	window := (elapsed + time.Duration(s.Timeout)).Seconds()
	var n float64
	if s.Rate > 0 {
		n = s.Rate*window*1.01 + float64(s.Connections) + 16
	} else {
		n = float64(s.Connections) * float64(max(s.Streams, 1)) * perConnectionRate * window
	}
	if s.Requests > 0 {
		n = min(n, float64(s.Requests))
	}
	return int64(min(n, float64(l.maxSize)))
}

// window is how long the worker's measured window can have been open at now.
func (l limits) window(now time.Time) time.Duration {
	w := max(now.Sub(l.start), 0) + l.slack
	if l.share.Duration > 0 {
		w = min(w, time.Duration(l.share.Duration)+l.slack)
	}
	return w
}

// maxIndex is the largest interval index the worker can have sealed at now: intervals
// count from the window's start and, for a timed share, end with the drain of the timeout,
// or as late as its deadline: a worker on a busy machine that ends late seals intervals on
// its clock until it does, and they are as honest as the step it may still send by then.
func (l limits) maxIndex(now time.Time) int64 {
	span := max(now.Sub(l.start), 0) + l.slack
	if d := l.share.Duration; d > 0 {
		span = min(span, time.Duration(d+l.share.Timeout)+stepGrace+l.slack)
	}
	return int64(span / measure.DefaultInterval)
}

// checkTimes checks a report's start (on the worker's clock) and how far it runs.
func (l limits) checkTimes(what string, workerStart time.Time, elapsed time.Duration, now time.Time) error {
	start := workerStart.Add(-l.offset)
	if start.Before(l.start.Add(-l.slack)) {
		return forged("%s starts %v before the step did", what, l.start.Sub(start).Round(time.Millisecond))
	}
	if elapsed < 0 || start.Add(elapsed).After(now.Add(l.slack)) {
		return forged("%s ends %v in the future", what, start.Add(elapsed).Sub(now).Round(time.Millisecond))
	}
	return nil
}

// counts is the part that intervals and steps share: what attempts became.
type counts struct {
	attempts, requests, successes, bytes int64
	errors                               measure.Errors
	status                               map[int]int64
	latency, uncorrected                 *measure.Histogram
}

// check says whether the counts are each within [0, max] and add up: every attempt is a
// response or an error, every response a success or a status error, one latency sample
// per response, and statuses no more than the responses.
func (c counts) check(what string, maxAttempts, maxSize int64) error {
	e := c.errors
	for _, v := range []struct {
		name string
		n    int64
	}{{"attempts", c.attempts}, {"responses", c.requests}, {"successes", c.successes}, {"bytes", c.bytes},
		{"connect errors", e.Connect}, {"read errors", e.Read}, {"write errors", e.Write},
		{"timeouts", e.Timeout}, {"status errors", e.Status}, {"protocol errors", e.Protocol}} {
		if v.n < 0 || v.n > maxSize {
			return forged("%s: %d %s", what, v.n, v.name)
		}
	}
	if c.attempts > maxAttempts {
		return forged("%s: %d attempts, more than its share allows (%d)", what, c.attempts, maxAttempts)
	}
	if got := c.requests + e.Socket() + e.Protocol; got != c.attempts {
		return forged("%s: %d attempts but %d responses and errors", what, c.attempts, got)
	}
	if c.successes+e.Status != c.requests {
		return forged("%s: %d responses but %d successes and %d status errors", what, c.requests, c.successes, e.Status)
	}
	if err := checkStatus(what, c.status, c.requests); err != nil {
		return err
	}
	if err := checkHistogram(what+" latency", c.latency, c.requests, maxSize, true); err != nil {
		return err
	}
	return checkHistogram(what+" uncorrected latency", c.uncorrected, c.requests, maxSize, false)
}

// checkStatus checks status counts: codes 0-999, non-negative, no more than the responses.
func checkStatus(what string, status map[int]int64, requests int64) error {
	var sum int64
	for code, n := range status {
		if code < 0 || code >= maxStatus || n < 0 || n > requests-sum {
			return forged("%s: status %d counted %d times of %d responses", what, code, n, requests)
		}
		sum += n
	}
	return nil
}

// checkHistogram checks that h holds exactly want samples (h may be nil when optional, or
// when want is 0), each bucket within bounds so its total cannot overflow.
func checkHistogram(what string, h *measure.Histogram, want, maxSize int64, required bool) error {
	if h == nil {
		if required && want > 0 {
			return forged("%s: missing for %d responses", what, want)
		}
		return nil
	}
	var sum int64
	for _, b := range h.Buckets() {
		if b.Count > maxSize-sum {
			return forged("%s: more than %d samples", what, maxSize)
		}
		sum += b.Count
	}
	if sum != want || h.Count() != want {
		return forged("%s: %d samples for %d responses", what, sum, want)
	}
	return nil
}

// finite says whether every v is a finite number, not negative.
func finite(vs ...float64) bool {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return false
		}
	}
	return true
}

// checkInterval checks one streamed interval of worker m at now: in order, inside the
// step's window and length, its counts consistent, and the worker's running totals within
// its share.
func (l limits) checkInterval(m *member, iv *measure.Interval, now time.Time) error {
	what := fmt.Sprintf("interval %d", iv.Index)
	last := int64(-1)
	if n := len(m.intervals); n > 0 {
		last = m.intervals[n-1].Index
	}
	switch {
	case iv.Index <= last:
		return forged("%s after interval %d (out of order)", what, last)
	case iv.Index > l.maxIndex(now):
		return forged("%s beyond the step's length (at most %d by now)", what, l.maxIndex(now))
	case iv.Start < 0 || iv.Length < 0 || iv.Length > 2*measure.Duration(measure.DefaultInterval):
		return forged("%s: start %v, length %v", what, iv.Start, iv.Length)
	case iv.Connections < 0 || iv.InFlight < -1 || iv.Scheduled < 0 || iv.Lag < 0 || !finite(iv.TargetRate):
		return forged("%s: negative connections, requests in flight, schedule or lag", what)
	case len(iv.ByEnd) > maxEndpoints:
		return forged("%s: %d endpoints", what, len(iv.ByEnd))
	}
	if err := l.checkTimes(what, iv.StepStart, time.Duration(iv.Start+iv.Length), now); err != nil {
		return err
	}
	var byEnd int64
	for _, st := range iv.ByEnd {
		if err := checkStatus(what+" by endpoint", st, iv.Requests-byEnd); err != nil {
			return err
		}
		for _, n := range st {
			byEnd += n
		}
	}
	c := counts{iv.Attempts, iv.Requests, iv.Successes, iv.Bytes, iv.Errors, iv.Status, iv.Latency, iv.Uncorrected}
	if err := c.check(what, l.maxSize, l.maxSize); err != nil {
		return err
	}
	if err := checkIntervalStreams(what, iv.Streams, iv.Requests, l.maxSize); err != nil {
		return err
	}
	if len(iv.Exemplars) > maxExemplars {
		return forged("%s: %d exemplars", what, len(iv.Exemplars))
	}
	if err := checkExemplars(what, iv.Exemplars, iv.Attempts); err != nil {
		return err
	}
	total := iv.Attempts
	for _, p := range m.intervals {
		total += p.Attempts
	}
	if lim := l.attempts(l.window(now)); total > lim {
		return forged("%d attempts by %s, more than its share allows (%d)", total, what, lim)
	}
	return nil
}

// checkStep checks worker m's final step at now: inside the step's window, its counts
// consistent and within its share, every part non-negative. It recomputes the summaries
// and makes the warnings safe to print.
func (l limits) checkStep(s *measure.Step, now time.Time) error {
	if err := l.checkTimes("its step", s.Start, time.Duration(s.Elapsed), now); err != nil {
		return err
	}
	if d := l.share.Duration; d > 0 && s.Elapsed > d+measure.Duration(l.slack) {
		return forged("a window of %v for a share of %v", s.Elapsed, d)
	}
	c := counts{s.Attempts, s.Requests, s.Successes, s.Bytes, s.Errors, s.Status, s.Latency, s.Uncorrected}
	if err := c.check("its step", l.attempts(l.window(now)), l.maxSize); err != nil {
		return err
	}
	if err := checkHistogram("its step's attempts", s.AllAttempts, s.Requests+s.Errors.Timeout, l.maxSize, true); err != nil {
		return err
	}
	if s.SendLag != nil {
		if err := checkHistogram("its step's send lag", s.SendLag, s.Requests, l.maxSize, false); err != nil {
			return err
		}
	}
	d := s.Drained
	switch {
	case d.Attempts < 0 || d.Requests < 0 || d.Bytes < 0 || d.Attempts > s.Attempts || d.Requests > s.Requests || d.Requests > d.Attempts || d.Bytes > s.Bytes:
		return forged("its step: drained %+v of %d attempts", d, s.Attempts)
	case s.Connects < 0 || s.Connects > l.maxSize || s.ConnectTime < 0 || s.TargetCPU < 0 || s.Interval < 0:
		return forged("its step: negative connects or times")
	case s.Threads < 0 || s.Threads > 1<<16 || !finite(s.ThreadRPS.Mean, s.ThreadRPS.Stdev, s.ThreadRPS.Max, s.ThreadRPS.WithinStdev):
		return forged("its step: %d threads, rates %+v", s.Threads, s.ThreadRPS)
	case len(s.Endpoints) > maxEndpoints || int64(len(s.Timeline)) > l.maxIndex(now)+2:
		return forged("its step: %d endpoints, %d timeline entries", len(s.Endpoints), len(s.Timeline))
	}
	if err := checkParts(s, l.maxSize, l.maxIndex(now)+1); err != nil {
		return err
	}
	if len(s.Warnings) > maxWarnings {
		s.Warnings = append(s.Warnings[:maxWarnings], fmt.Sprintf("(%d more warnings)", len(s.Warnings)-maxWarnings))
	}
	for i, w := range s.Warnings {
		s.Warnings[i] = Printable(w, maxWarning)
	}
	s.Label = Printable(s.Label, maxWarning)
	s.Finish()
	return nil
}

// checkParts checks a step's breakdowns: endpoints, timeline, open loop, HTTP/2, generator.
func checkParts(s *measure.Step, maxSize, maxT int64) error {
	var sum int64
	for i := range s.Endpoints {
		ep := &s.Endpoints[i]
		if ep.Requests < 0 || ep.Requests > s.Requests-sum || ep.Drained < 0 || ep.Drained > ep.Requests {
			return forged("its step: endpoint with %d responses of %d", ep.Requests, s.Requests)
		}
		sum += ep.Requests
		ep.Name = Printable(ep.Name, maxWarning)
		if err := checkEndpoint(ep, maxSize); err != nil {
			return err
		}
	}
	if err := checkServerTiming(s.ServerTiming, s.Requests, maxSize); err != nil {
		return err
	}
	if x := s.Exemplars; x != nil {
		if x.Keep < 0 || x.Keep > maxExemplars || len(x.Slowest) > x.Keep || len(x.Bands) > len(measure.Bands) || len(x.Pool) > maxExemplars {
			return forged("its step: exemplars of %d kept: %d slowest, %d bands, %d in the pool", x.Keep, len(x.Slowest), len(x.Bands), len(x.Pool))
		}
		for i := range x.Bands {
			if !finite(x.Bands[i].Percentile) || x.Bands[i].Percentile > 100 {
				return forged("its step: exemplar band at percentile %v", x.Bands[i].Percentile)
			}
		}
		if len(x.Bands) > 0 && s.Attempts+s.Drained.Attempts == 0 {
			return forged("its step: %d exemplar bands of no attempt", len(x.Bands))
		}
		// One request may stand for several bands (a step of two requests has four bands):
		// the bands are bounded by their percentiles, not by the attempts.
		for i, l := range [][]measure.Exemplar{x.Slowest, x.Pool, bandExemplars(x.Bands)} {
			attempts := s.Attempts + s.Drained.Attempts
			if i == 2 {
				attempts = int64(len(measure.Bands))
			}
			if err := checkExemplars("its step", l, attempts); err != nil {
				return err
			}
		}
	}
	sum = 0
	for _, sec := range s.Timeline {
		if sec.T < 0 || int64(sec.T) > maxT || sec.Errors > maxSize || sec.Requests < 0 || sec.Requests > s.Requests-sum || sec.Errors < 0 || sec.Bytes < 0 || sec.Bytes > maxSize ||
			!finite(sec.P50, sec.P99, sec.Max) {
			return forged("its step: timeline entry %+v", sec)
		}
		sum += sec.Requests
	}
	if o := s.Open; o != nil && (o.Scheduled < 0 || o.Scheduled > maxSize || o.Sent < 0 || o.Sent > maxSize || o.LateSends < 0 || o.LateSends > o.Scheduled ||
		o.MaxLag < 0 || o.Connections < 0 || !finite(o.TargetRate)) {
		return forged("its step: open loop %+v", *o)
	}
	if h := s.HTTP2; h != nil {
		for _, n := range []int64{h.Retried, h.Cancelled, h.FlowStalls, int64(h.Streams), int64(h.MaxConcurrent)} {
			if n < 0 || n > maxSize {
				return forged("its step: HTTP/2 counts %+v", *h)
			}
		}
		for _, m := range []*map[string]int64{&h.GoAways, &h.Resets} {
			if len(*m) > maxEndpoints {
				return forged("its step: %d HTTP/2 error codes", len(*m))
			}
			safe := map[string]int64{}
			for code, n := range *m {
				if n < 0 || n > maxSize-safe[Printable(code, 32)] {
					return forged("its step: HTTP/2 counts %+v", *h)
				}
				safe[Printable(code, 32)] += n
			}
			if *m != nil {
				*m = safe
			}
		}
		h.Protocol = Printable(h.Protocol, 8)
	}
	if g := s.GeneratorLimit; g != nil {
		if g.Connections < 0 || g.Wanted < 0 || g.Connections > 1<<24 || g.Wanted > 1<<24 {
			return forged("its step: generator limit at %d of %d connections", g.Connections, g.Wanted)
		}
		g.Errno, g.Resource, g.Fix = Printable(g.Errno, 32), Printable(g.Resource, maxWarning), Printable(g.Fix, maxWarning)
	}
	if f := s.Failure; f != nil {
		if f.Kind != measure.FailureUnreachable && f.Kind != measure.FailureTLS {
			return forged("its step: failure of kind %q", Printable(f.Kind, 32))
		}
		f.Reason = Printable(f.Reason, maxWarning)
	}
	if g := s.Generator; g != nil && (g.CPU < 0 || g.Wall < 0 || g.RunWait < 0 || g.MachineCPUs < 0 || !finite(g.Cores, g.SchedSlowPct)) {
		return forged("its step: generator %+v", *g)
	}
	return nil
}

// checkEndpoint checks one endpoint's share of a step: its errors within bounds, every
// response a success or a status error, its statuses and latency samples its responses.
func checkEndpoint(ep *measure.EndpointStats, maxSize int64) error {
	what := "endpoint " + ep.Name
	e := ep.Errors
	for _, n := range []int64{e.Connect, e.Read, e.Write, e.Timeout, e.Status, e.Protocol} {
		if n < 0 || n > maxSize {
			return forged("%s: errors %+v", what, e)
		}
	}
	if ep.Successes < 0 || ep.Successes+e.Status != ep.Requests {
		return forged("%s: %d responses but %d successes and %d status errors", what, ep.Requests, ep.Successes, e.Status)
	}
	if err := checkStatus(what, ep.Status, ep.Requests); err != nil {
		return err
	}
	return checkHistogram(what+" latency", ep.Latency, ep.Requests, maxSize, false)
}

// maxTimingMetrics bounds the Server-Timing metric names of one worker's step.
const maxTimingMetrics = 256

// checkServerTiming checks a step's Server-Timing (nil when none) against its responses: no
// more responses with Server-Timing than the step's, one unaccounted sample for each of them,
// and for each metric, distinct by name, no more responses than those and one sample each.
func checkServerTiming(st *measure.ServerTiming, requests, maxSize int64) error {
	if st == nil {
		return nil
	}
	switch {
	case st.Responses < 0 || st.Responses > requests:
		return forged("its step: %d responses with Server-Timing of %d", st.Responses, requests)
	case st.Malformed < 0 || st.Malformed > maxSize || st.Dropped < 0 || st.Dropped > maxSize:
		return forged("its step: Server-Timing malformed %d, dropped %d", st.Malformed, st.Dropped)
	case len(st.Metrics) > maxTimingMetrics:
		return forged("its step: %d Server-Timing metrics (at most %d)", len(st.Metrics), maxTimingMetrics)
	}
	if err := checkHistogram("its step's server-timing unaccounted", st.Unaccounted, st.Responses, maxSize, true); err != nil {
		return err
	}
	seen := make(map[string]bool, len(st.Metrics))
	for i := range st.Metrics {
		m := &st.Metrics[i]
		m.Name = Printable(m.Name, maxWarning)
		what := "server-timing " + m.Name
		if seen[m.Name] || m.Responses < 0 || m.Responses > st.Responses {
			return forged("%s: %d responses of %d with Server-Timing (or named twice)", what, m.Responses, st.Responses)
		}
		seen[m.Name] = true
		if err := checkHistogram(what, m.Histogram, m.Responses, maxSize, true); err != nil {
			return err
		}
	}
	return nil
}

// maxExemplars bounds each list of single requests a worker keeps (the slowest, the bands,
// the pool of one per latency bucket).
const maxExemplars = 1 << 12

// bandExemplars are the bands' exemplars.
func bandExemplars(bands []measure.Band) []measure.Exemplar {
	out := make([]measure.Exemplar, len(bands))
	for i, b := range bands {
		out[i] = b.Exemplar
	}
	return out
}

// checkExemplars checks single requests kept of what had attempts (failed ones and those
// that ended after the window included: a timeout or a drained response is kept too): no
// more of them than attempts, each with non-negative latencies (its start may be in the warmup), a status code, at most MaxTimings
// Server-Timing metrics; their names are made safe to print.
func checkExemplars(what string, xs []measure.Exemplar, attempts int64) error {
	if int64(len(xs)) > attempts {
		return forged("%s: %d exemplars of %d attempts", what, len(xs), attempts)
	}
	for i := range xs {
		x := &xs[i]
		if x.Latency < 0 || x.Uncorrected < 0 || x.Status < 0 || x.Status >= maxStatus || len(x.Timing) > measure.MaxTimings {
			return forged("%s: exemplar of latency %v, status %d, %d Server-Timing metrics", what, x.Latency, x.Status, len(x.Timing))
		}
		x.Endpoint = Printable(x.Endpoint, maxWarning)
		for j := range x.Timing {
			if x.Timing[j].Dur < 0 {
				return forged("%s: exemplar Server-Timing %v", what, x.Timing[j].Dur)
			}
			x.Timing[j].Name = Printable(x.Timing[j].Name, maxWarning)
		}
	}
	return nil
}
