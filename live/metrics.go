package live

import (
	"regexp"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/apiperf/apiperf/measure"
)

// latencyBuckets are the classic buckets (seconds) served beside the native histogram.
var latencyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// metrics is the Prometheus view of the stream: counters and histograms add up the
// measured intervals; gauges show the latest one.
type metrics struct {
	reg         *prometheus.Registry
	requests    *prometheus.CounterVec
	errors      *prometheus.CounterVec
	latency     prometheus.Histogram
	uncorrected prometheus.Histogram
	conns       prometheus.Gauge
	inFlight    prometheus.Gauge
	target      prometheus.Gauge
	achieved    prometheus.Gauge
	lag         prometheus.Gauge
	level       prometheus.Gauge
	levels      prometheus.Gauge
	levelInfo   *prometheus.GaugeVec
	names       []string
}

func newMetrics(cfg Config) *metrics {
	reg := prometheus.NewRegistry()
	hist := func(name, help string) prometheus.Histogram {
		return prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: name, Help: help, Buckets: latencyBuckets,
			NativeHistogramBucketFactor: 1.1, NativeHistogramMaxBucketNumber: 160,
		})
	}
	m := &metrics{
		reg: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apiperf_requests_total",
			Help: "Complete responses measured, by endpoint and status code."}, []string{"endpoint", "status"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apiperf_errors_total",
			Help: "Failed attempts measured, by class (connect, read, write, timeout, status, protocol)."}, []string{"class"}),
		latency: hist("apiperf_request_duration_seconds",
			"Latency of complete responses, from send (open loop: from when the request was due) to the last byte."),
		conns: prometheus.NewGauge(prometheus.GaugeOpts{Name: "apiperf_connections",
			Help: "Connections open."}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{Name: "apiperf_in_flight",
			Help: "Requests in flight at the end of the last interval (closed loop: connections x streams)."}),
		target: prometheus.NewGauge(prometheus.GaugeOpts{Name: "apiperf_target_rate",
			Help: "Open loop: requests per second the schedule starts (0 in closed loop)."}),
		achieved: prometheus.NewGauge(prometheus.GaugeOpts{Name: "apiperf_achieved_rate",
			Help: "Complete responses per second in the last interval."}),
		lag: prometheus.NewGauge(prometheus.GaugeOpts{Name: "apiperf_schedule_lag_seconds",
			Help: "Open loop: the largest delay between a request's due time and its send in the last interval."}),
		level: prometheus.NewGauge(prometheus.GaugeOpts{Name: "apiperf_level",
			Help: "The sweep level or capacity probe running, from 1 (0 in a plain run)."}),
		levels: prometheus.NewGauge(prometheus.GaugeOpts{Name: "apiperf_levels",
			Help: "How many levels the sweep plans (0 when not known)."}),
		levelInfo: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "apiperf_level_info",
			Help: "1 for the level running, labelled with its load."}, []string{"level"}),
	}
	info := prometheus.NewGauge(prometheus.GaugeOpts{Name: "apiperf_run_info",
		Help: "1, labelled with the command, the target and the run's labels.", ConstLabels: runLabels(cfg)})
	info.Set(1)
	reg.MustRegister(m.requests, m.errors, m.latency, m.conns, m.inFlight, m.target, m.achieved, m.lag, m.level, m.levels, m.levelInfo, info,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

var invalidLabel = regexp.MustCompile(`[^A-Za-z0-9_]`)

// runLabels turns the run's labels into Prometheus labels (names made valid).
func runLabels(cfg Config) prometheus.Labels {
	l := prometheus.Labels{"command": cfg.Kind, "target": cfg.Target}
	for k, v := range cfg.Labels {
		name := "label_" + invalidLabel.ReplaceAllString(k, "_")
		l[name] = v
	}
	return l
}

func (m *metrics) step(st Step) {
	if st.Warmup {
		return
	}
	m.names = st.Endpoints
	m.level.Set(float64(st.Level))
	m.levels.Set(float64(st.Levels))
	m.levelInfo.Reset()
	m.levelInfo.WithLabelValues(st.Label).Set(1)
	m.target.Set(st.Load.Rate)
}

func (m *metrics) interval(iv *measure.Interval) {
	if len(iv.ByEnd) > 0 {
		for i, codes := range iv.ByEnd {
			name := strconv.Itoa(i)
			if i < len(m.names) {
				name = m.names[i]
			}
			for code, n := range codes {
				m.requests.WithLabelValues(name, strconv.Itoa(code)).Add(float64(n))
			}
		}
	} else {
		name := ""
		if len(m.names) == 1 {
			name = m.names[0]
		}
		for code, n := range iv.Status {
			m.requests.WithLabelValues(name, strconv.Itoa(code)).Add(float64(n))
		}
	}
	e := iv.Errors
	for _, c := range []struct {
		class string
		n     int64
	}{{"connect", e.Connect}, {"read", e.Read}, {"write", e.Write}, {"timeout", e.Timeout}, {"status", e.Status}, {"protocol", e.Protocol}} {
		m.errors.WithLabelValues(c.class).Add(float64(c.n))
	}
	observe(m.latency, iv.Latency)
	if iv.Uncorrected != nil {
		if m.uncorrected == nil {
			m.uncorrected = prometheus.NewHistogram(prometheus.HistogramOpts{
				Name: "apiperf_request_duration_uncorrected_seconds", Buckets: latencyBuckets,
				Help:                        "Open loop: latency of complete responses from the actual send.",
				NativeHistogramBucketFactor: 1.1, NativeHistogramMaxBucketNumber: 160,
			})
			m.reg.MustRegister(m.uncorrected)
		}
		observe(m.uncorrected, iv.Uncorrected)
	}
	m.conns.Set(float64(iv.Connections))
	if iv.InFlight >= 0 {
		m.inFlight.Set(float64(iv.InFlight))
	}
	m.achieved.Set(iv.QPS())
	m.lag.Set(iv.Lag.Duration().Seconds())
}

// observe adds every sample of h to p, each at its HDR bucket's value.
func observe(p prometheus.Histogram, h *measure.Histogram) {
	if h == nil {
		return
	}
	for _, b := range h.Buckets() {
		v := (b.From + (b.To-b.From)/2).Seconds()
		if b.To <= b.From {
			v = b.From.Seconds()
		}
		for i := int64(0); i < b.Count; i++ {
			p.Observe(v)
		}
	}
}
