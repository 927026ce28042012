package measure

import (
	"cmp"
	"encoding/hex"
	"fmt"
	"math/bits"
	"slices"
	"time"
)

// DefaultSlowest is how many of a step's slowest requests are kept.
const DefaultSlowest = 10

// Bands are the latency percentiles a step keeps one exemplar request around.
var Bands = [...]float64{50, 90, 99, 99.9}

// TraceID is a W3C trace id (16 bytes); all zeros means the request carried none.
type TraceID [16]byte

// IsZero reports whether t is no trace id.
func (t TraceID) IsZero() bool { return t == TraceID{} }

// String is the id as 32 lower-case hex digits, "" for none.
func (t TraceID) String() string {
	if t.IsZero() {
		return ""
	}
	return hex.EncodeToString(t[:])
}

// ParseTraceID reads 32 hex digits; "" is the zero id.
func ParseTraceID(s string) (TraceID, error) {
	var t TraceID
	if s == "" {
		return t, nil
	}
	if len(s) != 32 {
		return t, fmt.Errorf("trace id %q: want 32 hex digits", s)
	}
	if _, err := hex.Decode(t[:], []byte(s)); err != nil {
		return t, fmt.Errorf("trace id %q: %w", s, err)
	}
	return t, nil
}

// MarshalText writes the id as hex.
func (t TraceID) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText reads the id from hex.
func (t *TraceID) UnmarshalText(b []byte) error {
	v, err := ParseTraceID(string(b))
	*t = v
	return err
}

// Exemplar is one request kept whole: its latency (open loop: corrected and uncorrected),
// status, when it started in the measured window, its connection, endpoint and trace id.
type Exemplar struct {
	Latency     Duration `json:"latency"`
	Uncorrected Duration `json:"uncorrected,omitempty"`
	// Start is when the request was sent (open loop: due) since the window's start.
	Start    Duration `json:"start"`
	Status   int      `json:"status"`
	Conn     int      `json:"conn"`
	Endpoint string   `json:"endpoint,omitempty"`
	Trace    TraceID  `json:"trace_id,omitzero"`
	// Timing is the response's own Server-Timing, by metric name.
	Timing []MetricDur `json:"server_timing,omitempty"`
}

// MetricDur is one Server-Timing metric of one response.
type MetricDur struct {
	Name string   `json:"name"`
	Dur  Duration `json:"dur"`
}

// Largest is the response's Server-Timing metric of the longest dur; ok false when it had none.
func (e *Exemplar) Largest() (m MetricDur, ok bool) {
	for _, t := range e.Timing {
		if !ok || t.Dur > m.Dur {
			m, ok = t, true
		}
	}
	return m, ok
}

// key orders exemplars of equal latency: a hash of what a request keeps that no merge
// changes (not its start, which moves with the window).
func (e *Exemplar) key() uint64 {
	return requestKey(int64(e.Latency), int64(e.Uncorrected), int64(e.Conn), int64(e.Status), &e.Trace)
}

func requestKey(latency, uncorrected, conn, status int64, t *TraceID) uint64 {
	h := uint64(latency)*0x9e3779b97f4a7c15 ^ uint64(uncorrected) ^ uint64(conn)<<32 ^ uint64(status)<<20
	for i := 0; i < 16; i += 8 {
		h ^= uint64(t[i]) | uint64(t[i+1])<<8 | uint64(t[i+2])<<16 | uint64(t[i+3])<<24 |
			uint64(t[i+4])<<32 | uint64(t[i+5])<<40 | uint64(t[i+6])<<48 | uint64(t[i+7])<<56
		h = mix64(h)
	}
	return mix64(h)
}

// mix64 is splitmix64's finalizer.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// slower is the total order of the slowest list: by latency, ties broken by key.
func slower(a, b *Exemplar) bool {
	if a.Latency != b.Latency {
		return a.Latency > b.Latency
	}
	return a.key() > b.key()
}

// Band is the exemplar request kept around one latency percentile.
type Band struct {
	Percentile float64  `json:"percentile"`
	Exemplar   Exemplar `json:"exemplar"`
}

// Exemplars is what a step keeps of single requests: its N slowest responses, slowest first,
// and one response per latency band. Pool holds one candidate per latency bucket (a quarter
// octave: the slowest response in it), so that merging steps (threads, workers, hosts) picks
// the same bands as recording every response in one place would.
type Exemplars struct {
	Keep    int        `json:"keep"` // N
	Slowest []Exemplar `json:"slowest"`
	Bands   []Band     `json:"bands,omitempty"`
	Pool    []Exemplar `json:"pool,omitempty"`
}

// bucket is the quarter-octave latency bucket of d (in microseconds, as the histograms).
func bucket(d Duration) int {
	us := uint64(max(int64(d)/int64(time.Microsecond), 1))
	e := bits.Len64(us) - 1
	if e < 2 {
		return int(us)
	}
	return e*4 + int(us>>(e-2)&3)
}

const poolBuckets = 64 * 4

// Merge adds o's exemplars to x (either may be nil); shift moves o's start offsets onto x's
// window (o's window start minus x's).
func (x *Exemplars) Merge(o *Exemplars, shift time.Duration) *Exemplars {
	if o == nil {
		return x
	}
	if x == nil {
		x = &Exemplars{Keep: o.Keep}
	}
	x.Keep = max(x.Keep, o.Keep)
	for _, e := range o.Slowest {
		e.Start += Duration(shift)
		x.Slowest = append(x.Slowest, e.clone())
	}
	for _, e := range o.Pool {
		e.Start += Duration(shift)
		x.Pool = append(x.Pool, e.clone())
	}
	x.normalize()
	return x
}

// Clone returns an independent copy (nil for nil).
func (x *Exemplars) Clone() *Exemplars {
	if x == nil {
		return nil
	}
	c := &Exemplars{Keep: x.Keep, Slowest: cloneAll(x.Slowest), Pool: cloneAll(x.Pool)}
	if x.Bands != nil {
		c.Bands = make([]Band, 0, len(x.Bands))
	}
	for _, b := range x.Bands {
		b.Exemplar = b.Exemplar.clone()
		c.Bands = append(c.Bands, b)
	}
	return c
}

// clone is e with a Server-Timing list of its own.
func (e Exemplar) clone() Exemplar {
	e.Timing = slices.Clone(e.Timing)
	return e
}

func cloneAll(es []Exemplar) []Exemplar {
	if es == nil {
		return nil
	}
	out := make([]Exemplar, len(es))
	for i, e := range es {
		out[i] = e.clone()
	}
	return out
}

// normalize sorts the slowest list (slowest first) and keeps its first Keep, and keeps one
// candidate per latency bucket in the pool, the slowest (ties: the larger key), by bucket.
func (x *Exemplars) normalize() {
	slices.SortFunc(x.Slowest, func(a, b Exemplar) int {
		if slower(&a, &b) {
			return -1
		}
		if slower(&b, &a) {
			return 1
		}
		return 0
	})
	x.Slowest = x.Slowest[:min(len(x.Slowest), x.Keep)]
	slices.SortFunc(x.Pool, func(a, b Exemplar) int {
		if c := cmp.Compare(bucket(a.Latency), bucket(b.Latency)); c != 0 {
			return c
		}
		if slower(&a, &b) {
			return -1
		}
		if slower(&b, &a) {
			return 1
		}
		return 0
	})
	x.Pool = slices.CompactFunc(x.Pool, func(a, b Exemplar) bool { return bucket(a.Latency) == bucket(b.Latency) })
}

// pick sets the bands from the pool: for each percentile of latency, the candidate of the
// nearest non-empty bucket to that percentile's value.
func (x *Exemplars) pick(latency *Histogram) {
	x.Bands = x.Bands[:0]
	if latency == nil || latency.Count() == 0 || len(x.Pool) == 0 {
		return
	}
	for _, p := range Bands {
		want := bucket(Duration(latency.Percentile(p)))
		best := -1
		for i := range x.Pool {
			d := bucket(x.Pool[i].Latency) - want
			if best < 0 || abs(d) < abs(bucket(x.Pool[best].Latency)-want) {
				best = i
			}
		}
		x.Bands = append(x.Bands, Band{Percentile: p, Exemplar: x.Pool[best]})
	}
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// keptRequest is an exemplar as a recorder holds it: fixed size, the endpoint an index.
type keptRequest struct {
	latency, uncorrected, start int64
	key                         uint64
	trace                       TraceID
	timing                      Timings
	conn                        int32
	status                      int16
	endpoint                    uint8
	used                        bool
}

// keeper holds one recorder's slowest responses (a min-heap of fixed size, compared against
// its minimum) and one candidate per latency bucket: constant cost per response.
type keeper struct {
	heap []keptRequest
	pool [poolBuckets]keptRequest
}

func newKeeper(n int) *keeper {
	if n <= 0 {
		n = DefaultSlowest
	}
	return &keeper{heap: make([]keptRequest, 0, n)}
}

// add offers a response (from is the window's start; open keeps its uncorrected latency).
// Most responses cost a bucket index and two comparisons of latency: a request is built
// (and its key hashed) only when it may be kept.
func (k *keeper) add(s *Sample, from int64, open bool) {
	lat := s.Latency
	b := &k.pool[bucket(Duration(lat))]
	h := k.heap
	toPool := !b.used || lat >= b.latency
	toHeap := len(h) < cap(h) || lat >= h[0].latency
	if !toPool && !toHeap {
		return
	}
	r := keep(s, from, open)
	if toPool && (!b.used || b.less(&r)) {
		*b = r
	}
	if !toHeap {
		return
	}
	if len(h) < cap(h) {
		h = append(h, r)
		for i := len(h) - 1; i > 0; {
			p := (i - 1) / 2
			if !h[i].less(&h[p]) {
				break
			}
			h[p], h[i] = h[i], h[p]
			i = p
		}
		k.heap = h
		return
	}
	if !h[0].less(&r) {
		return
	}
	h[0] = r
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(h) && h[l].less(&h[m]) {
			m = l
		}
		if l+1 < len(h) && h[l+1].less(&h[m]) {
			m = l + 1
		}
		if m == i {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// keep makes the kept form of response s.
func keep(s *Sample, from int64, open bool) keptRequest {
	r := keptRequest{latency: s.Latency, start: s.Done - s.Latency - from,
		conn: s.Conn, status: s.Status, endpoint: s.Endpoint, used: true}
	if s.X != nil {
		r.trace, r.timing = s.X.Trace, s.X.Timing
	}
	if open {
		r.uncorrected = s.Uncorrected
	}
	r.key = requestKey(r.latency, r.uncorrected, int64(r.conn), int64(r.status), &r.trace)
	return r
}

// offer keeps response s in pool when it is the slowest of its bucket so far.
func offer(pool *[poolBuckets]keptRequest, s *Sample, from int64, open bool) {
	b := &pool[bucket(Duration(s.Latency))]
	if b.used && s.Latency < b.latency {
		return
	}
	if r := keep(s, from, open); !b.used || b.less(&r) {
		*b = r
	}
}

// less orders the min-heap: r is faster than o (the same order as slower, reversed).
func (r *keptRequest) less(o *keptRequest) bool {
	if r.latency != o.latency {
		return r.latency < o.latency
	}
	return r.key < o.key
}

// exemplar exports r; names label the endpoints, metrics the Server-Timing metrics (nil:
// the exemplar leaves them out).
func (r *keptRequest) exemplar(names, metrics []string) Exemplar {
	e := Exemplar{Latency: Duration(r.latency), Uncorrected: Duration(r.uncorrected), Start: Duration(r.start),
		Status: int(r.status), Conn: int(r.conn), Trace: r.trace}
	if int(r.endpoint) < len(names) {
		e.Endpoint = names[r.endpoint]
	}
	for i, m := range r.timing.Metric {
		if m != 0 && int(m) <= len(metrics) {
			e.Timing = append(e.Timing, MetricDur{Name: metrics[m-1], Dur: Duration(time.Duration(r.timing.Dur[i]) * time.Microsecond)})
		}
	}
	return e
}

// exemplars returns what k kept (names label the endpoints, metrics the Server-Timing metrics).
func (k *keeper) exemplars(names, metrics []string) *Exemplars {
	x := &Exemplars{Keep: cap(k.heap)}
	for i := range k.heap {
		x.Slowest = append(x.Slowest, k.heap[i].exemplar(names, metrics))
	}
	for i := range k.pool {
		if k.pool[i].used {
			x.Pool = append(x.Pool, k.pool[i].exemplar(names, metrics))
		}
	}
	x.normalize()
	return x
}
