package measure

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// MaxTimings is how many Server-Timing metrics of one response are recorded; more are
// counted as dropped.
const MaxTimings = 6

// maxMetricNames bounds the metric names one recorder tells apart; later names are dropped.
const maxMetricNames = 32

// Timings is the Server-Timing of one response: up to MaxTimings metrics, each a name index
// (from Recorder.Metric) and a duration. A name sent twice in one response is summed.
type Timings struct {
	Dur       [MaxTimings]uint32 // microseconds
	Metric    [MaxTimings]uint8  // Recorder.Metric's index; 0: unused
	Malformed uint8              // malformed metrics skipped (a dur past HighestLatency too)
	Dropped   uint8              // metrics beyond MaxTimings or the recorder's names
}

// Add records metric m (from Recorder.Metric; 0 counts as dropped) taking dur milliseconds.
// A dur past the histograms' range (HighestLatency), alone or summed with the same name's
// earlier ones, is no duration of the response: it counts as malformed, and the name is not
// recorded for this response.
func (t *Timings) Add(m uint8, durMs float64) {
	if m == 0 {
		t.Dropped = min(t.Dropped+1, 255)
		return
	}
	const highest = float64(HighestLatency / time.Microsecond)
	us := max(durMs*1000, 0)
	if !(us <= highest) { // NaN included
		t.Bad()
		return
	}
	for i := range t.Metric {
		switch t.Metric[i] {
		case m:
			if float64(t.Dur[i])+us > highest {
				copy(t.Metric[i:], t.Metric[i+1:])
				copy(t.Dur[i:], t.Dur[i+1:])
				t.Metric[len(t.Metric)-1], t.Dur[len(t.Dur)-1] = 0, 0
				t.Bad()
				return
			}
			t.Dur[i] += uint32(us)
			return
		case 0:
			t.Metric[i], t.Dur[i] = m, uint32(us)
			return
		}
	}
	t.Dropped = min(t.Dropped+1, 255)
}

// Bad counts a malformed metric or header.
func (t *Timings) Bad() { t.Malformed = min(t.Malformed+1, 255) }

// metricNames maps Server-Timing metric names to small indexes: lookups read a snapshot
// without locking; a new name takes the lock and publishes a longer snapshot.
type metricNames struct {
	mu    sync.Mutex
	names atomic.Pointer[[]string]
}

// Metric returns the index (from 1) of a Server-Timing metric name, adding it when new; 0
// when the recorder already tells apart as many names as it keeps. It is safe to call from
// any goroutine and does not allocate for a name it has seen.
func (r *Recorder) Metric(name []byte) uint8 {
	if p := r.metrics.names.Load(); p != nil {
		for i, n := range *p {
			if n == string(name) {
				return uint8(i + 1)
			}
		}
	}
	r.metrics.mu.Lock()
	defer r.metrics.mu.Unlock()
	var cur []string
	if p := r.metrics.names.Load(); p != nil {
		cur = *p
	}
	for i, n := range cur {
		if n == string(name) {
			return uint8(i + 1)
		}
	}
	if len(cur) >= maxMetricNames {
		return 0
	}
	next := append(cur[:len(cur):len(cur)], string(name))
	r.metrics.names.Store(&next)
	return uint8(len(next))
}

// timingRec is one recorder's Server-Timing: a histogram per metric name and, per response
// that had any, its latency minus the server's total (what the metrics do not account for).
type timingRec struct {
	metric      []*Histogram // by index-1
	responses   []int64
	with        int64 // responses with at least one metric
	malformed   int64
	dropped     int64
	unaccounted *Histogram
}

// addTimings records one response's Server-Timing (the recorder's lock is held).
func (r *Recorder) addTimings(s *Sample) {
	t := &s.X.Timing
	tr := &r.timing
	tr.malformed += int64(t.Malformed)
	tr.dropped += int64(t.Dropped)
	if t.Metric[0] == 0 {
		return
	}
	tr.with++
	if tr.unaccounted == nil {
		tr.unaccounted = NewHistogram()
	}
	var total int64
	for i, m := range t.Metric {
		if m == 0 {
			break
		}
		for int(m) > len(tr.metric) {
			tr.metric = append(tr.metric, NewHistogram())
			tr.responses = append(tr.responses, 0)
		}
		d := time.Duration(t.Dur[i]) * time.Microsecond
		tr.metric[m-1].Record(d)
		tr.responses[m-1]++
		total += int64(d)
	}
	tr.unaccounted.Record(time.Duration(max(s.Latency-total, 0)))
}

// MetricTiming is one Server-Timing metric over a step: the distribution of its dur.
type MetricTiming struct {
	Name      string     `json:"name"`
	Responses int64      `json:"responses"` // responses that sent the metric with a dur
	Histogram *Histogram `json:"histogram"`
	Summary   Summary    `json:"summary"`
}

// ServerTiming is what a step's responses said of their own time in Server-Timing headers:
// per metric name a histogram of dur (a name sent twice in one response counts once, summed),
// and per response that had any metric, its latency minus the sum of its metrics
// (Unaccounted: network, queueing and whatever the server did not time, assuming its metrics
// do not overlap).
type ServerTiming struct {
	Metrics     []MetricTiming `json:"metrics"` // by name
	Responses   int64          `json:"responses"`
	Unaccounted *Histogram     `json:"unaccounted,omitempty"`
	Malformed   int64          `json:"malformed,omitempty"` // malformed metrics skipped
	Dropped     int64          `json:"dropped,omitempty"`   // metrics past the per-response or per-run limit of names
}

// Metric returns the named metric, nil when the step has none.
func (st *ServerTiming) Metric(name string) *MetricTiming {
	if st == nil {
		return nil
	}
	for i := range st.Metrics {
		if st.Metrics[i].Name == name {
			return &st.Metrics[i]
		}
	}
	return nil
}

// Merge adds o to st (either may be nil) and returns the result.
func (st *ServerTiming) Merge(o *ServerTiming) *ServerTiming {
	if o == nil {
		return st
	}
	if st == nil {
		st = &ServerTiming{}
	}
	st.Responses += o.Responses
	st.Malformed += o.Malformed
	st.Dropped += o.Dropped
	st.Unaccounted = mergeHist(st.Unaccounted, o.Unaccounted)
	for _, m := range o.Metrics {
		if cur := st.Metric(m.Name); cur != nil {
			cur.Responses += m.Responses
			cur.Histogram = mergeHist(cur.Histogram, m.Histogram)
			continue
		}
		m.Histogram = mergeHist(nil, m.Histogram)
		st.Metrics = append(st.Metrics, m)
	}
	slices.SortFunc(st.Metrics, func(a, b MetricTiming) int { return strings.Compare(a.Name, b.Name) })
	for i := range st.Metrics {
		st.Metrics[i].Summary = Summarize(st.Metrics[i].Histogram)
	}
	return st
}

// Clone returns an independent copy (nil for nil).
func (st *ServerTiming) Clone() *ServerTiming {
	if st == nil {
		return nil
	}
	return (*ServerTiming)(nil).Merge(st)
}

// Largest is the metric with the largest value at percentile p, nil when there is none.
func (st *ServerTiming) Largest(p float64) *MetricTiming {
	if st == nil {
		return nil
	}
	var best *MetricTiming
	for i := range st.Metrics {
		m := &st.Metrics[i]
		if m.Histogram == nil || m.Histogram.Count() == 0 {
			continue
		}
		if best == nil || cmp.Compare(m.Histogram.Percentile(p), best.Histogram.Percentile(p)) > 0 {
			best = m
		}
	}
	return best
}

// serverTiming combines the recorders' Server-Timing; nil when no response had any and
// nothing was malformed.
func serverTiming(recs []*Recorder) *ServerTiming {
	var st *ServerTiming
	for _, r := range recs {
		tr := &r.timing
		if tr.with == 0 && tr.malformed == 0 && tr.dropped == 0 {
			continue
		}
		one := &ServerTiming{Responses: tr.with, Malformed: tr.malformed, Dropped: tr.dropped, Unaccounted: tr.unaccounted}
		var names []string
		if p := r.metrics.names.Load(); p != nil {
			names = *p
		}
		for i, h := range tr.metric {
			if tr.responses[i] > 0 && i < len(names) {
				one.Metrics = append(one.Metrics, MetricTiming{Name: names[i], Responses: tr.responses[i], Histogram: h})
			}
		}
		st = st.Merge(one)
	}
	return st
}
