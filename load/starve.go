package load

import (
	"runtime/metrics"
	"time"
)

// starvation watches the Go scheduler: when many goroutines wait long to run, the generator
// is short of CPU, and opening more connections would only make it worse.
type starvation struct {
	sample []metrics.Sample
	prev   []uint64
	seen   bool // the generator was starved at some point
}

const (
	schedMetric = "/sched/latencies:seconds"
	// starvedWait and starvedShare: starved when more than starvedShare of goroutine
	// wake-ups since the last check waited longer than starvedWait to run.
	starvedWait  = time.Millisecond
	starvedShare = 0.05
)

func newStarvation() *starvation {
	return &starvation{sample: []metrics.Sample{{Name: schedMetric}}}
}

// starved reads the scheduler's latency histogram and reports whether the share of slow
// wake-ups since the previous call is above starvedShare.
func (s *starvation) starved() bool {
	metrics.Read(s.sample)
	if s.sample[0].Value.Kind() != metrics.KindFloat64Histogram {
		return false
	}
	h := s.sample[0].Value.Float64Histogram()
	if len(s.prev) != len(h.Counts) {
		s.prev = make([]uint64, len(h.Counts))
		copy(s.prev, h.Counts)
		return false
	}
	var total, slow uint64
	for i, c := range h.Counts {
		d := c - s.prev[i]
		total += d
		if h.Buckets[i] >= starvedWait.Seconds() {
			slow += d
		}
	}
	copy(s.prev, h.Counts)
	starved := total > 0 && float64(slow) > starvedShare*float64(total)
	s.seen = s.seen || starved
	return starved
}
