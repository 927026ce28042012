package load

import (
	"sync/atomic"
	"time"

	"github.com/apiperf/apiperf/measure"
)

// sealLag is how long after an interval ends it is sealed: long enough for the samples
// still in batches (handed over at least every maxBatchAge) to reach their recorders.
const sealLag = time.Duration(maxBatchAge) + 50*time.Millisecond

// WithIntervals calls f with each interval of the live stream (measure.DefaultInterval
// long), in order, from the engine's supervising goroutine; the last ones come as the run
// ends. f may keep the intervals. The step's totals are exactly the sum of the intervals.
func WithIntervals(f func(*measure.Interval)) Option {
	return func(o *options) { o.intervals = f }
}

// withInterval sets the interval length (tests use short ones).
func withInterval(d time.Duration) Option { return func(o *options) { o.every = d } }

// nextSeal is when (since the step's start) the interval after the last sealed one is due
// to be sealed. Intervals count from the start of the measured window (after the warmup).
func (e *engine) nextSeal() time.Duration {
	return e.from + time.Duration(e.sealed+1)*e.stream.Every() + sealLag
}

// seal emits the intervals that are over.
func (e *engine) seal(now time.Duration) {
	if t := now - e.from - sealLag; t > 0 {
		e.stream.Seal(t, e.emit)
	}
}

// emit completes an interval with the engine's gauges and hands it on.
func (e *engine) emit(iv *measure.Interval) {
	e.sealed = iv.Index + 1
	iv.StepStart = e.base.Add(e.from) // the measured window starts after the warmup
	e.mu.Lock()
	iv.Connections = len(e.workers)
	switch {
	case e.cfg.OpenLoop() && e.cfg.HTTP2:
		iv.InFlight = -1 // streams are not counted per connection here: unknown
	case e.cfg.OpenLoop():
		for _, w := range e.workers {
			if w.inFlight.Load() {
				iv.InFlight++
			}
		}
	}
	e.mu.Unlock()
	if e.loops != nil {
		iv.Connections = e.cfg.Connections
		if e.cfg.OpenLoop() {
			iv.Connections = int(e.pool.Load())
			for _, l := range e.loops {
				iv.InFlight += int(l.inFlight())
			}
		}
	}
	if !e.cfg.OpenLoop() {
		iv.InFlight = iv.Connections * max(e.cfg.Streams, 1) // closed loop: each keeps its requests in flight
	}
	if e.cfg.OpenLoop() {
		iv.TargetRate = e.cfg.Rate
		iv.Lag = measure.Duration(e.ivLag.Swap(0))
		if e.sched != nil {
			p, start := e.sched.pacer, e.from+iv.Start.Duration()
			end := start + iv.Length.Duration()
			if e.sched.limit > 0 {
				end = min(end, e.sched.limit)
			}
			due := p.Count(end-1) - p.Count(start-1)
			if e.sched.total > 0 {
				due = max(0, min(p.Count(end-1), e.sched.total)-min(p.Count(start-1), e.sched.total))
			}
			iv.Scheduled = max(due, 0)
		}
	}
	if e.onInterval != nil {
		e.onInterval(iv)
	}
}

// noteLag records a late send's lag in the run's and the interval's maximum.
func (e *engine) noteLag(lag int64) {
	e.lateSend.Add(1)
	raise(&e.maxLag, lag)
	raise(&e.ivLag, lag)
}

// raise sets m to v when v is larger.
func raise(m *atomic.Int64, v int64) {
	for {
		cur := m.Load()
		if v <= cur || m.CompareAndSwap(cur, v) {
			return
		}
	}
}
