package measure

import (
	"math"
	"time"
)

// DefaultInterval is the length of one interval of the live stream.
const DefaultInterval = time.Second

// Interval is a snapshot of one interval of a running step, merged across the engine's
// threads: what completed in it (by completion time), its errors by class, its statuses and
// its latency histogram. The intervals of a step sum exactly to its totals. A sample that
// reaches its recorder after its interval was sealed counts in the oldest interval still open.
type Interval struct {
	Index     int64           `json:"index"`  // from 0 at the step's start
	Start     Duration        `json:"start"`  // since the step's start
	Length    Duration        `json:"length"` // the interval's length
	Attempts  int64           `json:"attempts"`
	Requests  int64           `json:"requests"` // complete responses, any status
	Successes int64           `json:"successes"`
	Bytes     int64           `json:"bytes"`
	Errors    Errors          `json:"errors"`
	Status    map[int]int64   `json:"status"`           // complete responses by status
	ByEnd     []map[int]int64 `json:"by_end,omitempty"` // status counts by endpoint index, when the scenario has several
	Latency   *Histogram      `json:"latency"`          // corrected latency of complete responses
	// Uncorrected is the open loop's latency from the actual send (nil in closed loop).
	Uncorrected *Histogram `json:"uncorrected,omitempty"`
	// Exemplars are responses of the interval that carried a trace id (--traceparent), one
	// per latency bucket, by latency; their Start is from the step's window start.
	Exemplars []Exemplar `json:"exemplars,omitempty"`
	// Streams is what streamed responses measured in the interval: the streams complete in
	// it and the gaps that ended in it (streaminterval.go); nil until the step has had a
	// stream or a gap, then in every later interval.
	Streams *Streams `json:"streams,omitempty"`

	// Set by the engine when the interval is sealed.
	StepStart   time.Time `json:"step_start"`            // when the step's measured window started (wall clock)
	Connections int       `json:"connections"`           // connections open
	InFlight    int       `json:"in_flight"`             // requests in flight when sealed (closed loop: connections x streams; -1: not known)
	TargetRate  float64   `json:"target_rate,omitempty"` // open loop: the schedule's requests per second
	Scheduled   int64     `json:"scheduled,omitempty"`   // open loop: requests that came due in the interval
	Lag         Duration  `json:"lag,omitempty"`         // open loop: the largest delay between due and actual send in it
}

// QPS is complete responses per second of the interval.
func (iv *Interval) QPS() float64 {
	if iv.Length <= 0 {
		return 0
	}
	return float64(iv.Requests) / iv.Length.Duration().Seconds()
}

// Second summarizes the interval for the step's timeline.
func (iv *Interval) Second() Second {
	s := Second{T: int(iv.Index), Requests: iv.Requests, Errors: iv.Errors.Total(), Bytes: iv.Bytes}
	if iv.Latency != nil && iv.Latency.Count() > 0 {
		ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
		s.P50, s.P99, s.Max = ms(iv.Latency.Percentile(50)), ms(iv.Latency.Percentile(99)), ms(iv.Latency.Max())
	}
	return s
}

// recInterval is one interval as one recorder holds it, with fixed-size counts so that
// recording into it does not allocate.
type recInterval struct {
	index                                int64
	attempts, requests, successes, bytes int64
	errors                               Errors
	codes                                []int64 // endpoint*1000 + status
	latency, uncorrected                 *intervalHistogram
	traced                               *[poolBuckets]keptRequest // responses with a trace id, one per bucket; nil until one
	streams                              *Streams                  // streams and gaps; nil until one (streaminterval.go)
}

// offer keeps a traced response as the interval's exemplar of its latency bucket.
func (iv *recInterval) offer(s *Sample, from int64, open bool) {
	if iv.traced == nil {
		iv.traced = new([poolBuckets]keptRequest)
	}
	offer(iv.traced, s, from, open)
}

func (r *Recorder) newInterval(index int64) *recInterval {
	if n := len(r.free); n > 0 {
		iv := r.free[n-1]
		r.free = r.free[:n-1]
		iv.index = index
		return iv
	}
	iv := &recInterval{index: index, codes: make([]int64, 1000*max(1, len(r.endpoints))), latency: newIntervalHistogram()}
	if r.open {
		iv.uncorrected = newIntervalHistogram()
	}
	return iv
}

func (iv *recInterval) reset() {
	codes, lat, unc, tr, st := iv.codes, iv.latency, iv.uncorrected, iv.traced, iv.streams
	clear(codes)
	lat.reset()
	if unc != nil {
		unc.reset()
	}
	if tr != nil {
		clear(tr[:])
	}
	if st != nil {
		st.reset()
	}
	*iv = recInterval{codes: codes, latency: lat, uncorrected: unc, traced: tr, streams: st}
}

// interval returns the open interval a sample done at t (since the step's start) counts in.
func (r *Recorder) interval(t int64) *recInterval {
	idx := t / r.every
	if idx < r.sealed {
		idx = r.sealed
	}
	for i := len(r.pending) - 1; i >= 0; i-- {
		if iv := r.pending[i]; iv.index == idx {
			return iv
		} else if iv.index < idx {
			iv := r.newInterval(idx)
			r.pending = append(r.pending, nil)
			copy(r.pending[i+2:], r.pending[i+1:])
			r.pending[i+1] = iv
			return iv
		}
	}
	iv := r.newInterval(idx)
	r.pending = append(r.pending, nil)
	copy(r.pending[1:], r.pending)
	r.pending[0] = iv
	return iv
}

// drain seals the intervals before index upTo (all with upTo < 0) and hands each to f, in
// order, then reuses it. Later samples for them count in interval upTo.
func (r *Recorder) drain(upTo int64, f func(iv *recInterval)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if upTo < 0 {
		upTo = math.MaxInt64
	} else {
		r.sealed = max(r.sealed, upTo)
	}
	n := 0
	for _, iv := range r.pending {
		if iv.index >= upTo {
			break
		}
		f(iv)
		iv.reset()
		r.free = append(r.free, iv)
		n++
	}
	r.pending = r.pending[:copy(r.pending, r.pending[n:])]
	if len(r.free) > 2 {
		r.retire(r.free[2:])
		r.free = r.free[:2] // keep memory constant: a sealed interval rarely needs more spares
	}
}

// IntervalStream merges the intervals of one step's recorders (one per engine thread) as
// they are sealed, and keeps the step's timeline and per-thread rates. Recording never waits
// for it: it takes each recorder's batch lock once per seal.
type IntervalStream struct {
	recs      []*Recorder
	every     time.Duration
	next      int64 // the first interval not yet emitted
	closed    bool
	timeline  []Second
	perThread [][]int64    // requests by thread and interval
	reuse     bool         // emit keeps no interval: their histograms are reused
	spare     []*Histogram // histograms of emitted intervals, for reuse
	spareIv   *Interval    // an emitted interval, for reuse
	streamed  bool         // an interval had streams: every later one has them too
}

// NewIntervalStream returns the stream of recs, in intervals of length every (default
// DefaultInterval). Call it before anything is recorded.
func NewIntervalStream(recs []*Recorder, every time.Duration) *IntervalStream {
	if every <= 0 {
		every = DefaultInterval
	}
	for _, r := range recs {
		r.every = int64(every)
	}
	return &IntervalStream{recs: recs, every: every, perThread: make([][]int64, len(recs))}
}

// ReuseIntervals says that whoever Seal and Close emit to keeps no interval past the call.
// The stream then reuses the intervals' histograms (one a second, two in open
// loop) instead of leaving them to the collector: a 30 s open-loop run peaked 4 MB higher than
// a 2 s one without it.
func (s *IntervalStream) ReuseIntervals() { s.reuse = true }

// histogram returns an empty histogram, a spare one when there is one.
func (s *IntervalStream) histogram() *Histogram {
	if n := len(s.spare); n > 0 {
		h := s.spare[n-1]
		s.spare = s.spare[:n-1]
		h.reset()
		return h
	}
	return newSparseHistogram()
}

// Every is the length of an interval.
func (s *IntervalStream) Every() time.Duration { return s.every }

// Seal emits, in order, every interval that ended by now (time since the step's start).
// emit may keep the intervals it is given.
func (s *IntervalStream) Seal(now time.Duration, emit func(*Interval)) {
	if !s.closed {
		s.collect(int64(now/s.every), emit)
	}
}

// Close emits every interval left, even those not over yet; after Close the stream is done.
func (s *IntervalStream) Close(emit func(*Interval)) {
	if !s.closed {
		s.collect(-1, emit)
		s.closed = true
	}
}

// collect seals the intervals before upTo (all with upTo < 0) in every recorder, merges
// them and emits them in order, empty ones included.
func (s *IntervalStream) collect(upTo int64, emit func(*Interval)) {
	if upTo >= 0 && upTo <= s.next {
		return
	}
	var merged []*Interval
	at := func(idx int64) *Interval {
		for int64(len(merged)) <= idx-s.next {
			i := s.next + int64(len(merged))
			merged = append(merged, s.interval(i))
		}
		return merged[idx-s.next]
	}
	if upTo > 0 {
		at(upTo - 1) // emit empty intervals too
	}
	for t, r := range s.recs {
		eps := len(r.endpoints)
		r.drain(upTo, func(ri *recInterval) {
			s.add(at(ri.index), ri, eps)
			pt := s.perThread[t]
			for int64(len(pt)) <= ri.index {
				pt = append(pt, 0)
			}
			pt[ri.index] += ri.requests
			s.perThread[t] = pt
		})
	}
	for _, iv := range merged {
		if len(iv.Exemplars) > 0 {
			x := Exemplars{Pool: iv.Exemplars}
			x.normalize()
			iv.Exemplars = x.Pool
		}
		open := len(s.recs) > 0 && s.recs[0].open
		if open && iv.Uncorrected == nil {
			iv.Uncorrected = s.histogram()
		}
		if iv.Streams != nil {
			s.streamed = true
		} else if s.streamed {
			iv.Streams = emptyStreams(open, s.histogram)
		}
		s.timeline = append(s.timeline, iv.Second())
		if emit != nil {
			emit(iv)
		}
		if s.reuse {
			s.keepSpares(iv)
		}
	}
	s.next += int64(len(merged))
}

// add merges a recorder's interval ri into iv; eps is the recorder's number of endpoints.
func (s *IntervalStream) add(iv *Interval, ri *recInterval, eps int) {
	iv.Attempts += ri.attempts
	iv.Requests += ri.requests
	iv.Successes += ri.successes
	iv.Bytes += ri.bytes
	iv.Errors.Add(ri.errors)
	ri.latency.take(iv.Latency)
	if ri.uncorrected != nil {
		if iv.Uncorrected == nil {
			iv.Uncorrected = s.histogram()
		}
		ri.uncorrected.take(iv.Uncorrected)
	}
	iv.mergeStreams(ri.streams, s.histogram)
	if eps > 1 && iv.ByEnd == nil {
		iv.ByEnd = make([]map[int]int64, eps)
		for i := range iv.ByEnd {
			iv.ByEnd[i] = map[int]int64{}
		}
	}
	for i, n := range ri.codes {
		if n == 0 {
			continue
		}
		iv.Status[i%1000] += n
		if eps > 1 {
			iv.ByEnd[i/1000][i%1000] += n
		}
	}
	if ri.traced != nil {
		for i := range ri.traced {
			if ri.traced[i].used {
				iv.Exemplars = append(iv.Exemplars, ri.traced[i].exemplar(nil, nil))
			}
		}
	}
}

// keepSpares keeps the histograms of an emitted interval, which nobody kept, for the next ones.
func (s *IntervalStream) keepSpares(iv *Interval) {
	hs := [5]*Histogram{iv.Latency, iv.Uncorrected}
	if st := iv.Streams; st != nil {
		hs[2], hs[3], hs[4] = st.First, st.Gap, st.FirstUncorrected
	}
	for _, h := range hs {
		if h != nil && len(s.spare) < 8 {
			s.spare = append(s.spare, h)
		}
	}
	iv.Latency, iv.Uncorrected, iv.Streams = nil, nil, nil
	s.spareIv = iv
}

// interval returns an empty interval of index i: the last one emitted, emptied, when emit
// keeps none (its maps and exemplars' array reused: a second's garbage otherwise, which grew
// a long run's memory until the collector's goal).
func (s *IntervalStream) interval(i int64) *Interval {
	iv := s.spareIv
	s.spareIv = nil
	if iv == nil {
		iv = &Interval{Status: map[int]int64{}}
	}
	status, byEnd, ex := iv.Status, iv.ByEnd, iv.Exemplars[:0]
	clear(status)
	for _, m := range byEnd {
		clear(m)
	}
	*iv = Interval{Index: i, Start: Duration(time.Duration(i) * s.every), Length: Duration(s.every),
		Status: status, ByEnd: byEnd, Latency: s.histogram(), Exemplars: ex}
	return iv
}

// Step closes the stream and combines its recorders' totals into a Step whose timeline is
// the stream's intervals. names labels the scenario endpoints (nil for a single request).
func (s *IntervalStream) Step(start time.Time, elapsed time.Duration, names []string) *Step {
	s.Close(nil)
	st := combine(start, elapsed, s.recs, names)
	st.Timeline = s.timeline
	if s.every != DefaultInterval {
		st.Interval = Duration(s.every)
	}
	// Per-thread rates: only whole intervals inside the window count as samples.
	var rates []float64
	full := int(elapsed / s.every)
	for _, pt := range s.perThread {
		for i := 0; i < full; i++ {
			var n int64
			if i < len(pt) {
				n = pt[i]
			}
			rates = append(rates, float64(n)/s.every.Seconds())
		}
	}
	if len(rates) == 0 && elapsed > 0 {
		// Shorter than an interval: one sample per thread, scaled to a second.
		for _, r := range s.recs {
			rates = append(rates, float64(r.requests-r.drained.Requests)/elapsed.Seconds())
		}
	}
	st.ThreadRPS = rateStats(rates)
	return st
}
