package measure

import (
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// The per-second intervals' histograms are made and reused without writing over all of their
// counts. HdrHistogram's Reset writes zeros over the 188 KB of a full histogram's counts, which
// makes every page of a reused one resident, where recording touches only the pages its
// buckets are in (a few of the 47 for a load's latencies).

// newSparseHistogram returns an empty histogram in the sparse form, whose memory grows with its
// non-empty buckets (a few bytes each). Recording into one costs 60-100 ns where the full form
// costs 5, so only what is off the hot path (the merge of a step's intervals) takes it.
func newSparseHistogram() *Histogram {
	return &Histogram{p: hdr.NewPacked(int64(LowestLatency/time.Microsecond), int64(HighestLatency/time.Microsecond), SigFigs)}
}

// addBucket adds n samples at v, the lowest value of one of the standard shape's buckets.
func (h *Histogram) addBucket(v, n int64) {
	if h.p != nil {
		_ = h.p.RecordValues(v, n) // cannot fail: v is a bucket's of this shape
		return
	}
	h.makeFull()
	_ = h.h.RecordValues(v, n)
}

// intervalHistogram is what a recorder's interval records into: full, so that recording costs
// what it costs in a step's histogram, and never reset. take hands what was recorded since the
// last take to the interval's merged histogram: the difference between the counts now and the
// counts then, both read into sparse histograms (which grow with the buckets recorded, about 8
// bytes each, not with the 23,552 buckets of the shape).
type intervalHistogram struct {
	h          *hdr.Histogram       // every sample recorded into it
	then       *hdr.PackedHistogram // h's counts at the last take (nil before the first)
	takenTotal int64                // h's count at the last take
}

// snapshots are sparse histograms to read a full one's counts into; a take keeps the one it read
// into as its histogram's new snapshot and gives back the old, so a recorder's intervals share
// one spare instead of holding one each.
var snapshots = sync.Pool{New: func() any { return newSparseHistogram().p }}

func newIntervalHistogram() *intervalHistogram {
	return &intervalHistogram{h: NewHistogram().h}
}

// Record adds one latency; values outside the range are clamped, never dropped.
func (h *intervalHistogram) Record(d time.Duration) {
	_ = h.h.RecordValues(micros(d), 1) // cannot fail: the value is within the trackable range
}

// take adds to dst (when not nil) every sample recorded since the last take, and makes the
// histogram empty again.
func (h *intervalHistogram) take(dst *Histogram) {
	if h.h.TotalCount() == h.takenTotal {
		return
	}
	now := snapshots.Get().(*hdr.PackedHistogram)
	now.Reset()
	now.MergeFrom(h.h)
	for v, n := range now.ForEachBucket {
		if h.then != nil {
			n -= h.then.CountAtValue(v)
		}
		if n > 0 && dst != nil {
			dst.addBucket(v, n)
		}
	}
	if h.then != nil {
		snapshots.Put(h.then)
	}
	h.then, h.takenTotal = now, h.h.TotalCount()
}

// reset makes the histogram empty again, handing what it held to nobody.
func (h *intervalHistogram) reset() { h.take(nil) }
