package measure

import hdr "github.com/HdrHistogram/hdrhistogram-go"

// A recorder keeps no histogram of its own for the step's latency: its intervals' histograms
// are never reset (histogram_interval.go), so together they hold every response's latency
// since the start. Recording each response once, not twice, spares a full histogram's touched
// pages and a record per response (issue 45). An interval dropped from the spares leaves its
// counts in retired.

// mergeLatency adds every response's latency r holds to dst. Call it with r.mu held.
func (r *Recorder) mergeLatency(dst *Histogram) {
	dst.Merge(r.retired)
	for _, ivs := range [2][]*recInterval{r.pending, r.free} {
		for _, iv := range ivs {
			dst.mergeHdr(iv.latency.h)
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
	}
}

// mergeHdr adds a full histogram of the standard shape to h.
func (h *Histogram) mergeHdr(o *hdr.Histogram) {
	h.makeFull()
	h.h.Merge(o)
}
