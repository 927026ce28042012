package cluster

import (
	"time"

	"github.com/apiperf/apiperf/measure"
)

// liveMerge merges the workers' intervals of a step by index, so the coordinator's live
// view and --listen show the whole load: interval i is handed on once every worker has
// sent its interval i or is over (finished or lost). A worker's intervals arrive in order.
type liveMerge struct {
	emit    func(*measure.Interval)
	pending map[int64][]*measure.Interval
	sent    []int64 // per worker: how many intervals it sent
	over    []bool  // per worker: it sends no more
	next    int64   // the next index to hand on
}

func newLiveMerge(workers int, emit func(*measure.Interval)) *liveMerge {
	return &liveMerge{emit: emit, pending: map[int64][]*measure.Interval{}, sent: make([]int64, workers), over: make([]bool, workers)}
}

// add takes worker k's interval (its StepStart already on the coordinator's clock).
func (l *liveMerge) add(k int, iv *measure.Interval) {
	if l == nil {
		return
	}
	l.pending[iv.Index] = append(l.pending[iv.Index], iv)
	l.sent[k] = iv.Index + 1
	l.flush()
}

// end says worker k sends no more intervals.
func (l *liveMerge) end(k int) {
	if l == nil {
		return
	}
	l.over[k] = true
	l.flush()
}

// flush hands on the complete intervals in order.
func (l *liveMerge) flush() {
	for len(l.pending) > 0 {
		for k := range l.sent {
			if !l.over[k] && l.sent[k] <= l.next {
				return
			}
		}
		if ivs := l.pending[l.next]; len(ivs) > 0 {
			l.emit(mergeIntervals(ivs))
		}
		delete(l.pending, l.next)
		l.next++
	}
}

// mergeIntervals adds up one interval of several workers exactly.
func mergeIntervals(ivs []*measure.Interval) *measure.Interval {
	m := *ivs[0]
	m.Status = measure.AddStatus(nil, m.Status)
	m.ByEnd = nil
	m.Latency = nil
	m.Uncorrected = nil
	m.Streams = nil
	var start time.Time
	for i, iv := range ivs {
		if i > 0 {
			m.Attempts += iv.Attempts
			m.Requests += iv.Requests
			m.Successes += iv.Successes
			m.Bytes += iv.Bytes
			m.Errors.Add(iv.Errors)
			m.Status = measure.AddStatus(m.Status, iv.Status)
			m.Connections += iv.Connections
			m.TargetRate += iv.TargetRate
			m.Scheduled += iv.Scheduled
			m.Lag = max(m.Lag, iv.Lag)
		}
		if start.IsZero() || iv.StepStart.Before(start) {
			start = iv.StepStart
		}
		for e, st := range iv.ByEnd {
			for len(m.ByEnd) <= e {
				m.ByEnd = append(m.ByEnd, nil)
			}
			m.ByEnd[e] = measure.AddStatus(m.ByEnd[e], st)
		}
		m.Latency = mergeHistogram(m.Latency, iv.Latency)
		m.Uncorrected = mergeHistogram(m.Uncorrected, iv.Uncorrected)
		m.Streams = m.Streams.Merge(iv.Streams)
	}
	m.StepStart = start
	return &m
}

func mergeHistogram(a, b *measure.Histogram) *measure.Histogram {
	switch {
	case b == nil:
		return a
	case a == nil:
		return b.Clone()
	}
	a.Merge(b)
	return a
}
