package live

import (
	"cmp"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"sync"

	"github.com/apiperf/apiperf/exposition"
	"github.com/apiperf/apiperf/measure"
)

// latencyBuckets are the histograms' bucket bounds (seconds).
var latencyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// errorClasses are the values of apiperf_errors_total's class label, in the order served.
var errorClasses = []string{"connect", "read", "write", "timeout", "status", "protocol"}

// metrics is the Prometheus view of the stream: counters and histograms add up the
// measured intervals; gauges show the latest one. Its methods may be called from any
// goroutine.
type metrics struct {
	mu          sync.Mutex
	info        []string              // name, value pairs
	requests    map[[2]string]float64 // by endpoint and status code
	errors      map[string]float64    // by class; nil until the first interval
	latency     *exposition.Histogram
	uncorrected *exposition.Histogram // nil until an open-loop interval
	streams     *streamMetrics        // nil until an interval with streams (stream.go)
	conns       float64
	inFlight    float64
	target      float64
	achieved    float64
	lag         float64
	level       float64
	levels      float64
	levelLabel  string
	hasLevel    bool
	names       []string
}

func newMetrics(cfg Config) *metrics {
	return &metrics{info: runLabels(cfg), requests: map[[2]string]float64{}, latency: exposition.NewNativeHistogram(latencyBuckets)}
}

var invalidLabel = regexp.MustCompile(`[^A-Za-z0-9_]`)

// runLabels turns the run's labels into Prometheus labels (names made valid), as name,
// value pairs sorted by name.
func runLabels(cfg Config) []string {
	l := map[string]string{"command": cfg.Kind, "target": cfg.Target}
	for k, v := range cfg.Labels {
		l["label_"+invalidLabel.ReplaceAllString(k, "_")] = v
	}
	var pairs []string
	for _, k := range slices.Sorted(maps.Keys(l)) {
		pairs = append(pairs, k, l[k])
	}
	return pairs
}

func (m *metrics) step(st Phase) {
	if st.Warmup {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.names = st.Endpoints
	m.level, m.levels = float64(st.Level), float64(st.Levels)
	m.levelLabel, m.hasLevel = st.Label, true
	m.target = st.Load.Rate
}

func (m *metrics) interval(iv *measure.Interval) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(iv.ByEnd) > 0 {
		for i, codes := range iv.ByEnd {
			name := strconv.Itoa(i)
			if i < len(m.names) {
				name = m.names[i]
			}
			for code, n := range codes {
				m.requests[[2]string{name, strconv.Itoa(code)}] += float64(n)
			}
		}
	} else {
		name := ""
		if len(m.names) == 1 {
			name = m.names[0]
		}
		for code, n := range iv.Status {
			m.requests[[2]string{name, strconv.Itoa(code)}] += float64(n)
		}
	}
	if m.errors == nil {
		m.errors = map[string]float64{}
	}
	e := iv.Errors
	for i, n := range []int64{e.Connect, e.Read, e.Write, e.Timeout, e.Status, e.Protocol} {
		m.errors[errorClasses[i]] += float64(n)
	}
	observe(m.latency, iv.Latency)
	for _, e := range iv.Exemplars {
		// OpenMetrics and protobuf scrapes carry it: the latest traced request of each bucket.
		m.latency.SetExemplar(exposition.Exemplar{Labels: []string{"trace_id", e.Trace.String()},
			Value: e.Latency.Duration().Seconds(), Time: iv.StepStart.Add(e.Start.Duration() + e.Latency.Duration())})
	}
	if iv.Uncorrected != nil {
		if m.uncorrected == nil {
			m.uncorrected = exposition.NewNativeHistogram(latencyBuckets)
		}
		observe(m.uncorrected, iv.Uncorrected)
	}
	m.streamInterval(iv)
	m.conns = float64(iv.Connections)
	if iv.InFlight >= 0 {
		m.inFlight = float64(iv.InFlight)
	}
	m.achieved = iv.QPS()
	m.lag = iv.Lag.Duration().Seconds()
}

// observe adds every sample of h to p, each at its HDR bucket's value.
func observe(p *exposition.Histogram, h *measure.Histogram) {
	if h == nil {
		return
	}
	for _, b := range h.Buckets() {
		v := (b.From + (b.To-b.From)/2).Seconds()
		if b.To <= b.From {
			v = b.From.Seconds()
		}
		p.ObserveN(v, uint64(b.Count))
	}
}

// write fills a /metrics page: apiperf's series, then its own Go runtime and process metrics.
func (m *metrics) write(p *exposition.Page) {
	m.mu.Lock()
	if len(m.requests) > 0 {
		p.Family("apiperf_requests_total", "Complete responses measured, by endpoint and status code.", "counter")
		keys := make([][2]string, 0, len(m.requests))
		for k := range m.requests {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b [2]string) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
		for _, k := range keys {
			p.Sample("apiperf_requests_total", m.requests[k], "endpoint", k[0], "status", k[1])
		}
	}
	if m.errors != nil {
		p.Family("apiperf_errors_total", "Failed attempts measured, by class (connect, read, write, timeout, status, protocol).", "counter")
		for _, c := range errorClasses {
			p.Sample("apiperf_errors_total", m.errors[c], "class", c)
		}
	}
	p.Histogram("apiperf_request_duration_seconds",
		"Latency of complete responses, from send (open loop: from when the request was due) to the last byte.", m.latency)
	if m.uncorrected != nil {
		p.Histogram("apiperf_request_duration_uncorrected_seconds", "Open loop: latency of complete responses from the actual send.", m.uncorrected)
	}
	m.writeStreams(p)
	p.Metric("apiperf_connections", "Connections open.", "gauge", m.conns)
	p.Metric("apiperf_in_flight", "Requests in flight at the end of the last interval (closed loop: connections x streams).", "gauge", m.inFlight)
	p.Metric("apiperf_target_rate", "Open loop: requests per second the schedule starts (0 in closed loop).", "gauge", m.target)
	p.Metric("apiperf_achieved_rate", "Complete responses per second in the last interval.", "gauge", m.achieved)
	p.Metric("apiperf_schedule_lag_seconds", "Open loop: the largest delay between a request's due time and its send in the last interval.", "gauge", m.lag)
	p.Metric("apiperf_level", "The sweep level or capacity probe running, from 1 (0 in a plain run).", "gauge", m.level)
	p.Metric("apiperf_levels", "How many levels the sweep plans (0 when not known).", "gauge", m.levels)
	if m.hasLevel {
		p.Family("apiperf_level_info", "1 for the level running, labelled with its load.", "gauge")
		p.Sample("apiperf_level_info", 1, "level", m.levelLabel)
	}
	p.Family("apiperf_run_info", "1, labelled with the command, the target and the run's labels.", "gauge")
	p.Sample("apiperf_run_info", 1, m.info...)
	m.mu.Unlock()
	exposition.WriteGo(p)
	exposition.WriteProcess(p)
}
