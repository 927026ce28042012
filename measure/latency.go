package measure

import hdr "github.com/HdrHistogram/hdrhistogram-go"

// A recorder keeps no histogram of its own for the step's latency (nor, in open loop, for its
// uncorrected latency): its intervals' histograms are never reset (histogram_interval.go), so
// together they hold every response's since the start. Recording each response once, not
// twice, spares a full histogram's touched pages and a record per response (issue 45). An
// interval dropped from the spares leaves its counts in retired (retiredUnc).

// mergeLatency adds every response's latency r holds to dst (uncorrected: the open loop's
// uncorrected latency). Call it with r.mu held.
func (r *Recorder) mergeLatency(dst *Histogram, uncorrected bool) {
	if uncorrected {
		dst.Merge(r.retiredUnc)
	} else {
		dst.Merge(r.retired)
	}
	for _, ivs := range [2][]*recInterval{r.pending, r.free} {
		for _, iv := range ivs {
			if h := iv.histogram(uncorrected); h != nil {
				dst.mergeHdr(h.h)
			}
		}
	}
}

// retire keeps the latencies of intervals about to be dropped.
func (r *Recorder) retire(ivs []*recInterval) {
	for _, iv := range ivs {
		if r.retired == nil {
			r.retired = NewHistogram()
		}
		r.retired.mergeHdr(iv.latency.h)
		if iv.uncorrected != nil {
			if r.retiredUnc == nil {
				r.retiredUnc = NewHistogram()
			}
			r.retiredUnc.mergeHdr(iv.uncorrected.h)
		}
	}
}

// histogram is the interval's latency histogram, or its uncorrected one (nil in closed loop).
func (iv *recInterval) histogram(uncorrected bool) *intervalHistogram {
	if uncorrected {
		return iv.uncorrected
	}
	return iv.latency
}

// mergeHdr adds a full histogram of the standard shape to h.
func (h *Histogram) mergeHdr(o *hdr.Histogram) {
	h.makeFull()
	h.h.Merge(o)
}
