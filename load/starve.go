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

// starveWatch is what an open loop on an event loop knows of the generator's CPU: its own
// waits and wake-ups, and the scheduler's (starvation).
type starveWatch struct {
	parks       int64 // how often the loop waited for an event
	checkAt     int64 // when starvation is checked next
	parksAt     int64 // parks at the last check
	wakes, slow int   // timer wake-ups since the last check, and those over starvedWait late
	starve      *starvation
	starved     bool // short of CPU at the last check: the pool does not grow
	seen        bool // starved at some point
}

// check finds out, at most every 20 ms, whether the generator is short of CPU: the
// runtime's goroutines wait to run, the loop's timer wakes it over starvedWait late more
// than starvedShare of the time, or the loop did not wait for an event once since the last
// check (it was busy all the time). It reports whether it checked (s.starved is the answer).
func (s *starveWatch) check(now int64) bool {
	if now < s.checkAt {
		return false
	}
	s.checkAt = now + int64(20*growCheck)
	idle := s.parks != s.parksAt
	s.parksAt = s.parks
	late := s.slow > 1 && float64(s.slow) > starvedShare*float64(s.wakes)
	s.wakes, s.slow = 0, 0
	s.starved = s.starve.starved() || !idle || late
	s.seen = s.seen || s.starved
	return true
}

// woke notes a timer wake-up late by late, and reports whether it counts in how late the
// loop's wake-ups come (not when over starvedWait late: the machine was short of CPU).
func (s *starveWatch) woke(late int64) bool {
	s.wakes++
	if late > int64(starvedWait) {
		s.slow++
		return false
	}
	return true
}
