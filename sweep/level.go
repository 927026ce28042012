package sweep

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/sample"
)

// Level is the numbers of one level of a run: a sweep level, the rate of a capacity probe,
// or the one level of a plain run. It is the one model every output renders (terminal
// table, .dat, charts, run.json, report.html, peak, knee, capacity, diff, history), so they
// cannot disagree.
//
// Repetitions (--count N) are reduced by one rule (see Reduce): rates are the median of the
// repetitions' rates; counts are summed; latency comes from the pooled histogram of every
// response of the level, and percentages from the pooled counts.
type Level struct {
	Label string  `json:"label"`          // "c=200" or "rate=1000/s", as Label builds it
	Value float64 `json:"value"`          // the concurrency or the target rate
	Open  bool    `json:"open,omitempty"` // Value is a rate (open loop)
	Reps  int     `json:"reps"`           // repetitions reduced into this level
	Steps []int   `json:"steps,omitempty"`

	QPS       float64        `json:"qps"`                     // median of the repetitions' responses per second
	Achieved  float64        `json:"achieved_rate,omitempty"` // open loop: median of requests sent per second of the window (measure.Step.SendRate)
	Attempts  int64          `json:"attempts"`                // summed over repetitions
	Scheduled int64          `json:"scheduled,omitempty"`     // open loop: requests due in the windows
	Responses int64          `json:"responses"`               // complete responses, any status
	Successes int64          `json:"successes"`
	Errors    measure.Errors `json:"errors"`
	Status    map[int]int64  `json:"status,omitempty"`
	Success   float64        `json:"success_pct"`         // successes / attempts, pooled
	ErrorRate float64        `json:"errors_pct"`          // failed attempts / attempts, pooled
	Classic   float64        `json:"classic_success_pct"` // the classic script's figure: socket errors only

	// Latency of every complete response of the level (pooled histogram); zero when none.
	Mean  measure.Duration `json:"mean"`
	P50   measure.Duration `json:"p50"`
	P75   measure.Duration `json:"p75"`
	P90   measure.Duration `json:"p90"`
	P95   measure.Duration `json:"p95,omitempty"`
	P99   measure.Duration `json:"p99"`
	P999  measure.Duration `json:"p99_9"`
	P9999 measure.Duration `json:"p99_99"`
	Max   measure.Duration `json:"max,omitempty"`

	// Stream is the level's figures of its streamed responses (time to first message, gaps);
	// nil when it had none (stream.go).
	Stream *StreamLevel `json:"stream,omitempty"`

	// Endpoints are the level's figures for each endpoint of a scenario mix, pooled over the
	// repetitions the same way (Label: the endpoint's name); none for a single request.
	Endpoints []Level `json:"endpoints,omitempty"`

	// Partial says only QPS, Mean and Classic are known: a level read from a classic .dat
	// file (no percentiles, no honest success rate). A negative Mean is unknown too.
	Partial bool `json:"partial,omitempty"`
	// Interrupted says a repetition of the level was cut short (Ctrl-C): its numbers cover
	// less than was planned, so it is never the peak, the knee or the limit.
	Interrupted bool `json:"interrupted,omitempty"`
	// GeneratorLimit is the limit of apiperf's own machine (local ports, file descriptors)
	// that kept a repetition from opening its connections: the numbers are the generator's
	// ceiling, so the level is never the peak, the knee, the limit or a target failure.
	GeneratorLimit *measure.GeneratorLimit `json:"generator_limit,omitempty"`
	// GeneratorBound says apiperf's own threads were short of CPU in a repetition
	// (measure.Generator.Bound): the numbers may understate the target.
	GeneratorBound bool `json:"generator_bound,omitempty"`
}

// GeneratorLimited reports whether the level hit a limit of apiperf's own machine.
func (l Level) GeneratorLimited() bool { return l.GeneratorLimit != nil }

// Label names a level: "c=200" for a concurrency, "rate=1000/s" for a rate. ParseLabel reads it.
func Label(open bool, level float64) string {
	if open {
		return "rate=" + FormatValue(level) + "/s"
	}
	return "c=" + FormatValue(level)
}

// ParseLabel reads a label written by Label; ok is false for anything else.
func ParseLabel(s string) (level float64, open, ok bool) {
	var num string
	switch {
	case strings.HasPrefix(s, "c="):
		num = s[2:]
	case strings.HasPrefix(s, "rate=") && strings.HasSuffix(s, "/s"):
		num, open = s[5:len(s)-2], true
	default:
		return 0, false, false
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return 0, false, false
	}
	return v, open, true
}

// FormatValue prints a level's number as labels, tables and .dat files show it: 200, 2500, 0.5.
func FormatValue(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// ValueOf returns the level of a step: its label's number, else its target rate in open
// loop, else its concurrency.
func ValueOf(s *measure.Step) (level float64, open bool) {
	if v, open, ok := ParseLabel(s.Label); ok {
		return v, open
	}
	if s.Open != nil {
		return s.Open.TargetRate, true
	}
	return float64(s.Concurrency), false
}

// Levels groups steps by level (repetitions share a label) and reduces each group with
// Reduce; levels are in ascending order of their value, whatever order they ran in.
func Levels(steps []*measure.Step) []Level {
	type group struct {
		label string
		value float64
		open  bool
		idx   []int
	}
	var groups []*group
	byLabel := map[string]*group{}
	for j, s := range steps {
		if s == nil {
			continue
		}
		v, open := ValueOf(s)
		label := Label(open, v)
		g := byLabel[label]
		if g == nil {
			g = &group{label: label, value: v, open: open}
			byLabel[label] = g
			groups = append(groups, g)
		}
		g.idx = append(g.idx, j)
	}
	slices.SortStableFunc(groups, func(a, b *group) int {
		switch {
		case a.value < b.value:
			return -1
		case a.value > b.value:
			return 1
		}
		return 0
	})
	out := make([]Level, 0, len(groups))
	for _, g := range groups {
		out = append(out, Reduce(g.label, g.value, g.open, steps, g.idx))
	}
	return out
}

// Reduce makes one Level of the repetitions steps[idx] of a level. The rule, and why:
//   - QPS and the achieved rate are the median of the repetitions' rates: a rate is a
//     figure of one repetition, and one disturbed repetition does not move a median;
//   - latency (mean and percentiles) comes from the histogram of every response of every
//     repetition: a percentile of all responses, so no slow response is hidden;
//   - attempts, responses, errors and statuses are summed, and the success and error rates
//     are pooled counts over pooled attempts.
func Reduce(label string, value float64, open bool, steps []*measure.Step, idx []int) Level {
	l := Level{Label: label, Value: value, Open: open, Reps: len(idx), Steps: idx}
	qps := make([]float64, 0, len(idx))
	achieved := make([]float64, 0, len(idx))
	var lat *measure.Histogram
	if len(idx) == 1 && steps[idx[0]].Latency != nil {
		lat = steps[idx[0]].Latency // one repetition: its own histogram, read, not a 188 KB copy
	}
	for _, j := range idx {
		s := steps[j]
		qps = append(qps, s.QPS())
		achieved = append(achieved, s.SendRate()) // sent in the window, answered in it or not: not the QPS again
		if s.Latency != nil && len(idx) > 1 {
			if lat == nil {
				lat = measure.NewHistogram()
			}
			lat.Merge(s.Latency)
		}
		l.Attempts += s.Attempts
		l.Responses += s.Requests
		l.Successes += s.Successes
		l.Errors.Add(s.Errors)
		l.Status = measure.AddStatus(l.Status, s.Status)
		l.Interrupted = l.Interrupted || s.Interrupted
		if l.GeneratorLimit == nil && s.GeneratorLimit != nil {
			g := *s.GeneratorLimit
			l.GeneratorLimit = &g
		}
		l.GeneratorBound = l.GeneratorBound || s.Generator.Bound()
		if s.Open != nil {
			l.Scheduled += s.Open.Scheduled
		}
	}
	if len(idx) > 0 { // a level without repetitions has no rates: zero, as its counts
		l.QPS = sample.Median(qps)
		if open {
			l.Achieved = sample.Median(achieved)
		}
	}
	if l.Attempts > 0 {
		l.Success = 100 * float64(l.Successes) / float64(l.Attempts)
		l.ErrorRate = 100 * float64(l.Errors.Total()) / float64(l.Attempts)
	}
	if l.Responses > 0 {
		l.Classic = 100 * float64(l.Responses-l.Errors.Socket()) / float64(l.Responses)
	}
	if lat != nil {
		l.setLatency(lat)
	}
	l.Stream = reduceStreams(steps, idx)
	l.Endpoints = reduceEndpoints(steps, idx)
	return l
}

// setLatency sets the level's mean, percentiles and maximum from the pooled histogram.
func (l *Level) setLatency(lat *measure.Histogram) {
	if lat.Count() > 0 {
		l.Mean = measure.Duration(lat.Mean())
		p := func(q float64) measure.Duration { return measure.Duration(lat.Percentile(q)) }
		l.P50, l.P75, l.P90, l.P99, l.P999, l.P9999 = p(50), p(75), p(90), p(99), p(99.9), p(99.99)
		l.P95, l.Max = p(95), measure.Duration(lat.Max())
	}
}

// reduceEndpoints pools each endpoint of a mix over the repetitions steps[idx], in the order
// the steps name them: attempts are its responses and its failed attempts that got none,
// QPS its responses over the repetitions' windows.
func reduceEndpoints(steps []*measure.Step, idx []int) []Level {
	var out []Level
	var lats []*measure.Histogram
	at := map[string]int{}
	var window float64
	for _, j := range idx {
		window += steps[j].Elapsed.Duration().Seconds()
		for _, ep := range steps[j].Endpoints {
			i, ok := at[ep.Name]
			if !ok {
				i = len(out)
				at[ep.Name] = i
				out = append(out, Level{Label: ep.Name})
				lats = append(lats, measure.NewHistogram())
			}
			e := &out[i]
			if ep.Latency != nil {
				lats[i].Merge(ep.Latency)
			}
			e.Responses += ep.Requests
			e.Attempts += ep.Requests + ep.Errors.Socket() + ep.Errors.Protocol
			e.Successes += ep.Successes
			e.Errors.Add(ep.Errors)
			e.Status = measure.AddStatus(e.Status, ep.Status)
		}
	}
	for i := range out {
		e := &out[i]
		e.Reps = len(idx)
		if window > 0 {
			e.QPS = float64(e.Responses) / window
		}
		if e.Attempts > 0 {
			e.Success = 100 * float64(e.Successes) / float64(e.Attempts)
			e.ErrorRate = 100 * float64(e.Errors.Total()) / float64(e.Attempts)
		}
		e.setLatency(lats[i])
	}
	return out
}

// Percentile returns the latency percentile named like an objective's metric ("p99.9").
func (l Level) Percentile(metric string) time.Duration {
	switch metric {
	case "p50":
		return l.P50.Duration()
	case "p75":
		return l.P75.Duration()
	case "p90":
		return l.P90.Duration()
	case "p95":
		return l.P95.Duration()
	case "p99":
		return l.P99.Duration()
	case "p99.9":
		return l.P999.Duration()
	case "p99.99":
		return l.P9999.Duration()
	case MetricMax:
		return l.Max.Duration()
	case MetricMean:
		return l.Mean.Duration()
	}
	if l.Stream != nil && isStreamMetric(metric) {
		return l.Stream.percentile(metric).Duration()
	}
	return 0
}

// Millis returns latency d of l in milliseconds for charts and tables: NaN when unknown
// (a partial level, or a level without responses).
func (l Level) Millis(d measure.Duration) float64 {
	if l.Partial || l.Responses == 0 || d < 0 {
		return math.NaN()
	}
	return float64(d) / float64(time.Millisecond)
}

// MeanMillis is the mean latency in milliseconds, NaN when unknown; a partial level knows it.
func (l Level) MeanMillis() float64 {
	if l.Mean < 0 || (!l.Partial && l.Responses == 0) {
		return math.NaN()
	}
	return float64(l.Mean) / float64(time.Millisecond)
}

// SuccessPct is the success rate, NaN for a partial level (it has only the classic figure).
func (l Level) SuccessPct() float64 {
	if l.Partial {
		return math.NaN()
	}
	return l.Success
}
