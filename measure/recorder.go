package measure

import (
	"math"
	"sync"
	"time"
)

// Sample is one request attempt as the engine saw it. Times are nanoseconds since the
// step's start on the monotonic clock.
type Sample struct {
	Done        int64  // when the attempt ended
	Latency     int64  // corrected latency: from send (open loop: from the due time) to the last byte
	Uncorrected int64  // open loop only: from the actual send
	X           *Extra // its trace id and Server-Timing; nil: it has neither (read only during Add)
	Bytes       int32  // bytes read
	Conn        int32  // the connection it went on (engine numbering)
	Status      int16  // HTTP status of a complete response
	Class       Class
	Endpoint    uint8 // index into the scenario's endpoints
}

// Extra is what a response sample carries beside its timing only when it has it: the
// request's trace id (--traceparent) and the response's Server-Timing. A run with neither
// pays for none (the sample stays small); the engine keeps the Extras beside its batches.
type Extra struct {
	Trace  TraceID // the request's W3C trace id; zero: none
	Timing Timings // the response's Server-Timing
	// Stream marks a streamed response (a gRPC server stream, SSE): Messages is how many it
	// had and First the time to the first of them (corrected, as Latency). stream.go
	Stream   bool
	Messages int32
	First    int64
}

// Empty reports whether t holds nothing: no metric, none malformed or dropped.
func (t *Timings) Empty() bool { return t.Metric[0] == 0 && t.Malformed == 0 && t.Dropped == 0 }

// StatusSet is a set of HTTP status codes (0..999).
type StatusSet [16]uint64

// DefaultExpected is the set of statuses that count as success: 2xx and 3xx.
func DefaultExpected() StatusSet {
	var s StatusSet
	s.AddRange(200, 399)
	return s
}

// AddRange adds codes lo..hi inclusive.
func (s *StatusSet) AddRange(lo, hi int) {
	for c := max(lo, 0); c <= hi && c < 1000; c++ {
		s[c>>6] |= 1 << (c & 63)
	}
}

// Has reports whether code is in the set.
func (s *StatusSet) Has(code int) bool {
	return code >= 0 && code < 1000 && s[code>>6]&(1<<(code&63)) != 0
}

// Recorder accumulates samples of one group of workers (one engine thread). Workers hand it
// batches, so its lock is taken once per batch, not per request.
type Recorder struct {
	mu         sync.Mutex
	expected   StatusSet
	open       bool
	retired    *Histogram // latencies of intervals no longer kept (more than two spares); nil until one (latency.go)
	retiredUnc *Histogram // the same for the open loop's uncorrected latencies
	lag        *Histogram // open loop: from due to actual send (corrected - uncorrected)
	timedOut   *Histogram // the latencies of attempts that timed out; nil until one (all attempts: these and latency)
	attempts   int64
	requests   int64
	successes  int64
	bytes      int64
	errors     Errors
	status     [1000]int64
	endpoints  []*endpointRec
	keep       *keeper // the slowest responses and one per latency bucket; made at the first response
	slowest    int     // how many of the slowest responses keep holds (KeepSlowest)
	timing     timingRec
	metrics    metricNames
	streams    *Streams // streamed responses (stream.go); nil: none

	every    int64          // interval length (ns)
	sealed   int64          // intervals before this one were handed to the stream
	pending  []*recInterval // open intervals, by index
	free     []*recInterval // sealed intervals kept for reuse
	from, to int64          // the measured window (see Window)
	drained  Drained
}

type endpointRec struct {
	requests, successes int64
	drained             int64 // responses after the window
	errors              Errors
	status              map[int]int64
	latency             *Histogram
}

// NewRecorder returns a recorder; open says whether the uncorrected view is kept, and
// endpoints is the number of scenario endpoints (0 or 1 for a single request).
func NewRecorder(expected StatusSet, open bool, endpoints int) *Recorder {
	r := &Recorder{expected: expected, open: open, every: int64(DefaultInterval), to: math.MaxInt64}
	if open {
		r.lag = NewHistogram()
	}
	if endpoints > 1 {
		r.endpoints = make([]*endpointRec, endpoints)
		for i := range r.endpoints {
			r.endpoints[i] = &endpointRec{status: map[int]int64{}, latency: NewHistogram()}
		}
	}
	return r
}

// Window sets the measured window, as offsets from the step's start: an attempt that ends
// before from is warmup and is not recorded; one that ends after to was in flight when the
// window closed (drained): it is recorded but not counted in the rate. to <= 0 means no end.
// Call it before the first sample, or to close the window early (an interruption).
func (r *Recorder) Window(from, to time.Duration) {
	r.mu.Lock()
	r.from, r.to = int64(from), int64(to)
	if to <= 0 {
		r.to = math.MaxInt64
	}
	r.mu.Unlock()
}

// KeepSlowest sets how many of the slowest responses are kept (n <= 0: DefaultSlowest).
// Call it before the first sample.
func (r *Recorder) KeepSlowest(n int) {
	r.mu.Lock()
	r.slowest, r.keep = n, nil
	r.mu.Unlock()
}

// Add records a batch of samples.
func (r *Recorder) Add(batch []Sample) {
	r.mu.Lock()
	for i := range batch {
		r.add(&batch[i])
	}
	r.mu.Unlock()
}

func (r *Recorder) add(s *Sample) {
	if s.Done < r.from {
		return // warmup
	}
	r.attempts++
	r.bytes += int64(s.Bytes)
	if s.Done > r.to {
		r.drained.Attempts++
		r.drained.Bytes += int64(s.Bytes)
		if s.Class == Response {
			r.drained.Requests++
		}
	}
	iv := r.interval(s.Done - r.from)
	iv.attempts++
	iv.bytes += int64(s.Bytes)
	var ep *endpointRec
	if int(s.Endpoint) < len(r.endpoints) {
		ep = r.endpoints[s.Endpoint]
	}
	if s.Class == Response {
		r.requests++
		iv.requests++
		lat := time.Duration(s.Latency)
		iv.latency.Record(lat) // the step's latency too (latency.go)
		if r.keep == nil {
			r.keep = newKeeper(r.slowest)
		}
		r.keep.add(s, r.from, r.open)
		if x := s.X; x != nil {
			if !x.Trace.IsZero() {
				iv.offer(s, r.from, r.open)
			}
			if !x.Timing.Empty() {
				r.addTimings(s)
			}
		}
		if x := s.X; x != nil && x.Stream {
			r.addStream(s, iv)
		}
		if r.open {
			r.lag.Record(time.Duration(s.Latency - s.Uncorrected))
			iv.uncorrected.Record(time.Duration(s.Uncorrected)) // the step's too (latency.go)
		}
		code := int(s.Status)
		if code >= 0 && code < len(r.status) {
			r.status[code]++
			ei := 0 // the endpoint's block of codes (one block for a single request)
			if int(s.Endpoint) < len(r.endpoints) {
				ei = int(s.Endpoint)
			}
			iv.codes[ei*1000+code]++
		}
		ok := r.expected.Has(code)
		if ok {
			r.successes++
			iv.successes++
		} else {
			r.errors.Status++
			iv.errors.Status++
		}
		if ep != nil {
			ep.requests++
			if s.Done > r.to {
				ep.drained++
			}
			ep.status[code]++
			ep.latency.Record(lat)
			if ok {
				ep.successes++
			} else {
				ep.errors.Status++
			}
		}
		return
	}
	var e Errors
	switch s.Class {
	case ConnectError:
		e.Connect = 1
	case ReadError:
		e.Read = 1
	case WriteError:
		e.Write = 1
	case TimeoutError:
		e.Timeout = 1
		if r.timedOut == nil {
			r.timedOut = NewHistogram()
		}
		r.timedOut.Record(time.Duration(s.Latency))
	default:
		e.Protocol = 1
	}
	r.errors.Add(e)
	iv.errors.Add(e)
	if ep != nil {
		ep.errors.Add(e)
	}
}

// Progress returns the counts so far (for live progress lines).
func (r *Recorder) Progress() (requests, errors int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests, r.errors.Total()
}

// Combine turns the recorders of one step (one per engine thread) into a Step, for
// recorders whose intervals no IntervalStream took: start and elapsed are the measured
// window. names labels the scenario endpoints (nil for a single request).
func Combine(start time.Time, elapsed time.Duration, recs []*Recorder, names []string) *Step {
	return NewIntervalStream(recs, 0).Step(start, elapsed, names)
}

// combine adds up the recorders' totals.
func combine(start time.Time, elapsed time.Duration, recs []*Recorder, names []string) *Step {
	s := &Step{Start: start, Elapsed: Duration(elapsed), Status: map[int]int64{}, Threads: len(recs)}
	s.Latency, s.AllAttempts = NewHistogram(), NewHistogram()
	for _, r := range recs {
		r.mu.Lock()
		s.Attempts += r.attempts
		s.Requests += r.requests
		s.Successes += r.successes
		s.Bytes += r.bytes
		s.Errors.Add(r.errors)
		s.Drained.add(r.drained)
		for code, n := range r.status {
			if n > 0 {
				s.Status[code] += n
			}
		}
		r.mergeLatency(s.Latency, false)
		r.mergeLatency(s.AllAttempts, false)
		s.AllAttempts.Merge(r.timedOut)
		if r.open {
			if s.Uncorrected == nil {
				s.Uncorrected = NewHistogram()
			}
			r.mergeLatency(s.Uncorrected, true)
			if s.SendLag == nil {
				s.SendLag = NewHistogram()
			}
			s.SendLag.Merge(r.lag)
		}
		s.Streams = s.Streams.Merge(r.streams)
		for i, ep := range r.endpoints {
			name := ""
			if i < len(names) {
				name = names[i]
			}
			s.Endpoints = mergeEndpoint(s.Endpoints, EndpointStats{
				Name: name, Requests: ep.requests, Drained: ep.drained, Successes: ep.successes, Errors: ep.errors,
				Status: ep.status, Latency: ep.latency,
			})
		}
		r.mu.Unlock()
	}
	for i := range s.Endpoints {
		s.Endpoints[i].LatencySummary = Summarize(s.Endpoints[i].Latency)
	}
	for _, r := range recs {
		r.mu.Lock()
		var metrics []string
		if p := r.metrics.names.Load(); p != nil {
			metrics = *p
		}
		if r.keep != nil {
			s.Exemplars = s.Exemplars.Merge(r.keep.exemplars(names, metrics), 0)
		}
		r.mu.Unlock()
	}
	s.ServerTiming = serverTiming(recs)
	s.Finish()
	return s
}

func rateStats(xs []float64) RateStats {
	if len(xs) == 0 {
		return RateStats{}
	}
	var sum, mx float64
	for _, x := range xs {
		sum += x
		mx = math.Max(mx, x)
	}
	mean := sum / float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	sd := 0.0
	if len(xs) > 1 {
		sd = math.Sqrt(ss / float64(len(xs)-1))
	}
	var in int
	for _, x := range xs {
		if x >= mean-sd && x <= mean+sd {
			in++
		}
	}
	return RateStats{Mean: mean, Stdev: sd, Max: mx, WithinStdev: 100 * float64(in) / float64(len(xs))}
}
