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

// intervals is a run's live stream of intervals.
type intervals struct {
	stream     *measure.IntervalStream
	onInterval func(*measure.Interval)
	sealed     int64        // intervals emitted so far
	ivLag      atomic.Int64 // the largest send lag in the current interval
}

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
	e.drv.gauges(iv)
	if iv.Streams != nil {
		iv.Streams.Kind = e.streamKind()
	}
	if !e.cfg.OpenLoop() {
		iv.InFlight = iv.Connections * max(e.cfg.Streams, 1) // closed loop: each keeps its requests in flight
	}
	if e.cfg.OpenLoop() {
		iv.TargetRate = e.cfg.Rate
		iv.Lag = measure.Duration(e.ivLag.Swap(0))
		// The schedule every open loop keeps: request i is due at i/rate, up to the window's
		// end or -n.
		p, start := Pacer{Rate: e.cfg.Rate}, e.from+iv.Start.Duration()
		end := start + iv.Length.Duration()
		if e.to > 0 {
			end = min(end, e.to)
		}
		due := p.Count(end-1) - p.Count(start-1)
		if total := e.cfg.Requests; total > 0 {
			due = max(0, min(p.Count(end-1), total)-min(p.Count(start-1), total))
		}
		iv.Scheduled = max(due, 0)
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
