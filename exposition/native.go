package exposition

import (
	"math"
	"slices"
)

// Native histogram parameters, as the Prometheus client library's defaults: buckets start at
// schema 3 (each bucket's upper bound 2^(1/8), about 9%, above the previous one), values at
// or below nativeZeroThreshold count in the zero bucket, and the schema is lowered (buckets
// merged in pairs) while more than nativeMaxBuckets are in use.
const (
	nativeSchema        = 3
	nativeMinSchema     = -4
	nativeMaxBuckets    = 160
	nativeZeroThreshold = 2.938735877055719e-39 // 2^-128
)

// native keeps a histogram's observations in exponential buckets: bucket i holds the values
// in (2^((i-1)/2^schema), 2^(i/2^schema)].
type native struct {
	schema int32
	counts map[int32]uint64
	zero   uint64
}

// NewNativeHistogram returns an empty histogram with these classic upper bounds that also
// keeps a native (exponential) histogram, served in the protobuf format.
func NewNativeHistogram(bounds []float64) *Histogram {
	h := NewHistogram(bounds)
	h.native = &native{schema: nativeSchema, counts: map[int32]uint64{}}
	return h
}

func (n *native) observe(v float64, c uint64) {
	if v <= nativeZeroThreshold {
		n.zero += c
		return
	}
	n.counts[nativeIndex(v, n.schema)] += c
	for len(n.counts) > nativeMaxBuckets && n.schema > nativeMinSchema {
		merged := make(map[int32]uint64, len(n.counts)/2+1)
		for i, k := range n.counts {
			// Bucket j of schema s-1 spans buckets 2j-1 and 2j of schema s.
			merged[(i+1)>>1] += k
		}
		n.counts, n.schema = merged, n.schema-1
	}
}

// nativeIndex returns the index of the bucket holding v > 0 at this schema: the smallest i
// with v <= 2^(i/2^schema).
func nativeIndex(v float64, schema int32) int32 {
	per := math.Ldexp(1, int(schema)) // buckets per power of two
	i := int32(math.Ceil(math.Log2(v) * per))
	// Correct the logarithm's rounding at the bounds.
	if v > math.Exp2(float64(i)/per) {
		i++
	} else if v <= math.Exp2(float64(i-1)/per) {
		i--
	}
	return i
}

// spans returns the used buckets as spans (offset from the end of the previous span, the
// first from index 0; length) and their counts as deltas from the previous bucket's.
func (n *native) spans() (spans [][2]int32, deltas []int64) {
	idx := make([]int32, 0, len(n.counts))
	for i, c := range n.counts {
		if c > 0 {
			idx = append(idx, i)
		}
	}
	slices.Sort(idx)
	var prevCount int64
	for k, i := range idx {
		switch {
		case k == 0:
			spans = append(spans, [2]int32{i, 1})
		case i == idx[k-1]+1:
			spans[len(spans)-1][1]++
		default:
			spans = append(spans, [2]int32{i - idx[k-1] - 1, 1})
		}
		c := int64(n.counts[i])
		deltas = append(deltas, c-prevCount)
		prevCount = c
	}
	return spans, deltas
}
