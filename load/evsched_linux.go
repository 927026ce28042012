//go:build linux

package load

import (
	"time"
)

// openShare is an open loop's share of the schedule: loop t of T owns requests t, t+T,
// t+2T, ... of the pacer's schedule (request i is due at start + i/rate).
type openShare struct {
	pacer       Pacer
	first, step int64 // this loop's requests: first, first+step, first+2*step, ...
	k           int64 // requests taken from this loop's share so far
	due         int64 // when request first+k*step is due (offset from the step's start)
	limit       int64 // requests due at or after this are past the schedule (0: by count)
	total       int64 // -n: the schedule's length (0: by duration)
	over        bool  // the loop sends nothing more
	scheduled   int64 // requests due inside the measured window that were taken
	sent        int64 // requests taken inside the measured window (sentIn)
}

// past reports whether the loop's next request is beyond the schedule.
func (o *openShare) past() bool {
	i := o.first + o.k*o.step
	return (o.total > 0 && i >= o.total) || (o.limit > 0 && o.due >= o.limit)
}

// ready reports whether the loop's next request is due by now.
func (o *openShare) ready(now int64) bool { return !o.over && o.due <= now }

// takeNext takes the loop's next request and returns when it was due: it counts in scheduled
// when due inside the measured window (from on), in sent when sent inside it (sentIn).
func (o *openShare) takeNext(from int64, sentIn bool) int64 {
	due := o.due
	if due >= from {
		o.scheduled++
	}
	if sentIn {
		o.sent++
	}
	o.advance()
	return due
}

// advance moves on to the loop's next request.
func (o *openShare) advance() {
	o.k++
	o.due = int64(o.pacer.Due(o.first + o.k*o.step))
	o.over = o.over || o.past()
}

// dueBy is how many of the loop's requests are due by t.
func (o *openShare) dueBy(t int64) int64 {
	n := o.pacer.Count(time.Duration(t))
	if o.total > 0 {
		n = min(n, o.total)
	}
	if n <= o.first {
		return 0
	}
	return (n - o.first + o.step - 1) / o.step
}
