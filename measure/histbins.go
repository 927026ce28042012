package measure

import (
	"math"
	"slices"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// bins is the compact form of a histogram decoded from a run document: the indices of its
// non-empty buckets of the standard shape in ascending order, and their counts (uint32 while
// they fit, 6 bytes a bucket in all). A bucket's lowest and highest equivalent values come from
// the shape's table. The statistics below are the ones hdrhistogram-go computes over the full
// counts (the same bucket values, the same rank rule), so both forms give the same figures.
type bins struct {
	idx   []uint16
	count []uint32 // nil when a count does not fit: then wide holds them
	wide  []int64
	total int64
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
	counts := h.Export().Counts
	n, fits, last := 0, true, 0
	for i, c := range counts {
		if c != 0 {
			n, last = n+1, i
			fits = fits && c <= math.MaxUint32
		}
	}
	if last >= len(shape()) || last > math.MaxUint16 {
		return nil
	}
	if n*(2+8) >= fullBytes() {
		return nil
	}
	b := &bins{idx: make([]uint16, 0, n), total: h.TotalCount()}
	if fits {
		b.count = make([]uint32, 0, n)
	} else {
		b.wide = make([]int64, 0, n)
	}
	for i, c := range counts {
		if c == 0 {
			continue
		}
		b.idx = append(b.idx, uint16(i))
		if fits {
			b.count = append(b.count, uint32(c))
		} else {
			b.wide = append(b.wide, c)
		}
	}
	return b
}

func (c *bins) n(i int) int64 {
	if c.count != nil {
		return int64(c.count[i])
	}
	return c.wide[i]
}

func (c *bins) from(i int) int64 { return shape()[c.idx[i]].From }
func (c *bins) to(i int) int64   { return shape()[c.idx[i]].To }

func (c *bins) clone() *bins {
	return &bins{idx: slices.Clone(c.idx), count: slices.Clone(c.count), wide: slices.Clone(c.wide), total: c.total}
}

// recordInto adds every sample to h, a histogram of the standard shape: each bucket's count
// lands in the same bucket, so the merge is exact.
func (c *bins) recordInto(h *hdr.Histogram) {
	for i := range c.idx {
		_ = h.RecordValues(c.from(i), c.n(i)) // cannot fail: the value is a bucket's of this shape
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
	i := 0
	for ; i < len(c.idx)-1; i++ {
		if seen += c.n(i); seen >= target {
			break
		}
	}
	if p == 0 {
		return c.from(i)
	}
	return c.to(i)
}

func (c *bins) min() int64 {
	if len(c.idx) == 0 {
		return 0
	}
	return c.from(0)
}

func (c *bins) max() int64 {
	if len(c.idx) == 0 {
		return 0
	}
	return c.to(len(c.idx) - 1)
}

// median is a bucket's median equivalent value, the value its samples count as in the mean.
func (c *bins) median(i int) int64 {
	from, to := c.from(i), c.to(i)
	return from + (to-from+1)>>1
}

func (c *bins) mean() float64 {
	if c.total == 0 {
		return 0
	}
	var m float64
	for i := range c.idx {
		m += float64(c.n(i)) * float64(c.median(i)) / float64(c.total)
	}
	return m
}

func (c *bins) stdev() float64 {
	if c.total == 0 {
		return 0
	}
	mean := c.mean()
	var sum float64
	for i := range c.idx {
		d := float64(c.median(i)) - mean
		sum += d * d * float64(c.n(i)) / float64(c.total)
	}
	return math.Sqrt(sum)
}

func (c *bins) buckets() []Bucket {
	out := make([]Bucket, len(c.idx))
	for i := range c.idx {
		out[i] = Bucket{time.Duration(c.from(i)) * time.Microsecond, time.Duration(c.to(i)) * time.Microsecond, c.n(i)}
	}
	return out
}

// makeFull turns a compact histogram into the full form, which recording and merging into need.
func (h *Histogram) makeFull() {
	if h.b != nil {
		h.h, h.b = h.full(), nil
	}
}

// full returns the full form: the histogram itself, or a new one holding the compact form's
// samples (not kept: reading a compact histogram never grows it).
func (h *Histogram) full() *hdr.Histogram {
	if h.b == nil {
		return h.h
	}
	f := NewHistogram().h
	h.b.recordInto(f)
	return f
}

// reset empties the histogram, in the full form.
func (h *Histogram) reset() {
	if h.b != nil {
		h.h, h.b = NewHistogram().h, nil
		return
	}
	h.h.Reset()
}
