package measure

import (
	"encoding/binary"
	"iter"
	"math"
	"slices"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// bins is the compact form of a histogram decoded from a run document: its non-empty buckets
// of the standard shape in ascending order, as a stream of uvarints, each bucket's count
// (never 0) preceded, when buckets were skipped, by a 0 and how many. A sweep's histograms
// hold thousands of buckets of small counts: about 1.2 bytes a bucket (an index and a count
// array took 6, 110 MB for a 35 MB run.json). A bucket's lowest and highest equivalent values
// come from the shape's table. The statistics below are the ones hdrhistogram-go computes over
// the full counts (the same bucket values, the same rank rule, the same order of sums), so both
// forms give the same figures.
type bins struct {
	enc         []byte
	first, last int // shape indices of the lowest and highest non-empty buckets
	n           int // non-empty buckets
	total       int64
}

// add appends bucket i with count n (> 0), above every bucket added before.
func (c *bins) add(i int, n int64) {
	if c.n == 0 {
		c.first, c.last = i, -1
	}
	if skip := i - c.last - 1; skip > 0 {
		c.enc = append(c.enc, 0)
		c.enc = binary.AppendUvarint(c.enc, uint64(skip))
	}
	c.enc = binary.AppendUvarint(c.enc, uint64(n))
	c.last, c.n, c.total = i, c.n+1, c.total+n
}

// all yields each non-empty bucket's shape index and count, in ascending order.
func (c *bins) all() iter.Seq2[int, int64] {
	return func(yield func(int, int64) bool) {
		i := -1
		for p := 0; p < len(c.enc); {
			v, k := binary.Uvarint(c.enc[p:])
			p += k
			if v == 0 { // buckets skipped, then the count
				skip, k := binary.Uvarint(c.enc[p:])
				p += k
				i += int(skip)
				v, k = binary.Uvarint(c.enc[p:])
				p += k
			}
			i++
			if !yield(i, int64(v)) {
				return
			}
		}
	}
}

// shape is the standard shape's buckets: index i's lowest and highest equivalent values (µs).
var shape = sync.OnceValue(func() []hdr.Bar {
	h := NewHistogram().h
	_ = h.RecordValue(h.HighestTrackableValue()) // the iteration stops at the last sample: put one in the last bucket
	return h.Distribution()
})

// fullBytes is what a full histogram's counts take (made when first asked: a histogram made
// at init would be 376 KB of garbage in every process, a load's included).
var fullBytes = sync.OnceValue(func() int { return 8 * len(NewHistogram().h.Export().Counts) })

// binsOf returns the compact form of a histogram of the standard shape, or nil when the full
// form is as small.
func binsOf(h *hdr.Histogram) *bins {
	b := &bins{}
	for i, c := range h.Export().Counts {
		if c == 0 {
			continue
		}
		if i >= len(shape()) {
			return nil
		}
		b.add(i, c)
	}
	if !b.small() {
		return nil
	}
	b.enc = slices.Clip(b.enc)
	return b
}

// small says whether the compact form takes less than the full one.
func (c *bins) small() bool { return len(c.enc)+64 < fullBytes() }

func from(i int) int64 { return shape()[i].From }
func to(i int) int64   { return shape()[i].To }

func (c *bins) clone() *bins {
	d := *c
	d.enc = slices.Clone(c.enc)
	return &d
}

// recordInto adds every sample to h, a histogram of the standard shape: each bucket's count
// lands in the same bucket, so the merge is exact.
func (c *bins) recordInto(h *hdr.Histogram) {
	for i, n := range c.all() {
		_ = h.RecordValues(from(i), n) // cannot fail: the value is a bucket's of this shape
	}
}

// percentile is the value at percentile p (0..100): the highest equivalent value of the bucket
// where the samples counted reach p's rank (the lowest, for p = 0).
func (c *bins) percentile(p float64) int64 {
	if c.total == 0 {
		return 0
	}
	p = min(max(p, 0), 100)
	rank := (p/100)*float64(c.total) + 0.5
	target := int64(1)
	switch {
	case !(rank >= 1):
	case rank >= float64(c.total):
		target = c.total
	default:
		target = int64(rank)
	}
	var seen int64
	at := c.last // where the rank is reached, or the last bucket
	for i, n := range c.all() {
		if seen += n; seen >= target {
			at = i
			break
		}
	}
	if p == 0 {
		return from(at)
	}
	return to(at)
}

func (c *bins) min() int64 {
	if c.n == 0 {
		return 0
	}
	return from(c.first)
}

func (c *bins) max() int64 {
	if c.n == 0 {
		return 0
	}
	return to(c.last)
}

// median is a bucket's median equivalent value, the value its samples count as in the mean.
func median(i int) int64 {
	lo, hi := from(i), to(i)
	return lo + (hi-lo+1)>>1
}

func (c *bins) mean() float64 {
	if c.total == 0 {
		return 0
	}
	var m float64
	for i, n := range c.all() {
		m += float64(n) * float64(median(i)) / float64(c.total)
	}
	return m
}

func (c *bins) stdev() float64 {
	if c.total == 0 {
		return 0
	}
	mean := c.mean()
	var sum float64
	for i, n := range c.all() {
		d := float64(median(i)) - mean
		sum += d * d * float64(n) / float64(c.total)
	}
	return math.Sqrt(sum)
}

func (c *bins) buckets() []Bucket {
	out := make([]Bucket, 0, c.n)
	for i, n := range c.all() {
		out = append(out, Bucket{time.Duration(from(i)) * time.Microsecond, time.Duration(to(i)) * time.Microsecond, n})
	}
	return out
}

// makeFull turns a compact or sparse histogram into the full form, which recording and merging
// into need.
func (h *Histogram) makeFull() {
	if h.h == nil {
		h.h, h.b, h.p = h.full(), nil, nil
	}
}

// full returns the full form: the histogram itself, or a new one holding the compact or sparse
// form's samples (not kept: reading such a histogram never grows it).
func (h *Histogram) full() *hdr.Histogram {
	if h.h != nil {
		return h.h
	}
	f := NewHistogram().h
	if h.b != nil {
		h.b.recordInto(f)
	} else {
		h.p.MergeInto(f)
	}
	return f
}

// reset empties the histogram, in the full form (a sparse one stays sparse).
func (h *Histogram) reset() {
	switch {
	case h.p != nil:
		h.p.Reset()
	case h.b != nil:
		h.h, h.b = NewHistogram().h, nil
	default:
		h.h.Reset()
	}
}
