// Package measure records what a load run observed: HDR latency histograms, counters by
// outcome, status codes and a per-second timeline, per worker without shared locks on the
// hot path, merged exactly at the end.
package measure

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram bounds: 1 µs to 1 h at 3 significant digits, in microseconds.
const (
	LowestLatency  = time.Microsecond
	HighestLatency = time.Hour
	SigFigs        = 3
)

// Histogram is an HDR latency histogram in microseconds. Its JSON form is the standard
// HdrHistogram V2 compressed, base64 interchange encoding ("HISTFAAA...").
//
// A histogram is held in one of three forms: full (h: every bucket of the standard shape, 188 KB
// whatever it holds), which recording and merging into need; for one decoded from a run
// document, its non-empty buckets only (b, histbins.go); or, for a per-second interval of a
// running step, hdrhistogram-go's sparse PackedHistogram (p, histogram_interval.go). The last
// two turn full when something records or merges into them. A sweep's run.json holds thousands
// of histograms of a few hundred buckets each; decoded full, a 35 MB document took 1.4 GB to
// re-render.
type Histogram struct {
	h *hdr.Histogram
	b *bins
	p *hdr.PackedHistogram
}

// NewHistogram returns an empty histogram covering LowestLatency..HighestLatency.
func NewHistogram() *Histogram {
	return &Histogram{h: hdr.New(int64(LowestLatency/time.Microsecond), int64(HighestLatency/time.Microsecond), SigFigs)}
}

// Record adds one latency; values outside the range are clamped, never dropped.
func (h *Histogram) Record(d time.Duration) {
	h.RecordN(d, 1)
}

// RecordN adds n samples of latency d.
func (h *Histogram) RecordN(d time.Duration, n int64) {
	h.makeFull()
	_ = h.h.RecordValues(micros(d), n) // cannot fail: the value is within the trackable range
}

// micros is d in whole microseconds, clamped to the histograms' range.
func micros(d time.Duration) int64 {
	return min(max(int64(d/time.Microsecond), 1), int64(HighestLatency/time.Microsecond))
}

// Merge adds every sample of o to h.
func (h *Histogram) Merge(o *Histogram) {
	if o == nil {
		return
	}
	h.makeFull()
	switch {
	case o.b != nil:
		o.b.recordInto(h.h)
	case o.p != nil:
		o.p.MergeInto(h.h)
	default:
		h.h.Merge(o.h)
	}
}

// Count is the number of samples.
func (h *Histogram) Count() int64 {
	switch {
	case h.b != nil:
		return h.b.total
	case h.p != nil:
		return h.p.TotalCount()
	}
	return h.h.TotalCount()
}

// Percentile returns the latency at percentile p (0..100).
func (h *Histogram) Percentile(p float64) time.Duration {
	if h.Count() == 0 {
		return 0
	}
	switch {
	case h.b != nil:
		return time.Duration(h.b.percentile(p)) * time.Microsecond
	case h.p != nil:
		return time.Duration(h.p.ValueAtPercentile(p)) * time.Microsecond
	}
	return time.Duration(h.h.ValueAtPercentile(p)) * time.Microsecond
}

// Min is the smallest sample.
func (h *Histogram) Min() time.Duration {
	switch {
	case h.b != nil:
		return time.Duration(h.b.min()) * time.Microsecond
	case h.p != nil:
		return time.Duration(h.p.Min()) * time.Microsecond
	}
	return time.Duration(h.h.Min()) * time.Microsecond
}

// Max is the largest sample (at histogram precision).
func (h *Histogram) Max() time.Duration {
	if h.Count() == 0 {
		return 0
	}
	return time.Duration(h.maxUS()) * time.Microsecond
}

func (h *Histogram) maxUS() int64 {
	switch {
	case h.b != nil:
		return h.b.max()
	case h.p != nil:
		return h.p.Max()
	}
	return h.h.Max()
}

// Mean is the average sample.
func (h *Histogram) Mean() time.Duration { return fdur(h.meanUS()) }

func (h *Histogram) meanUS() float64 {
	switch {
	case h.b != nil:
		return h.b.mean()
	case h.p != nil:
		return h.p.Mean()
	}
	return h.h.Mean()
}

// Stdev is the standard deviation of the samples.
func (h *Histogram) Stdev() time.Duration { return fdur(h.stdevUS()) }

func (h *Histogram) stdevUS() float64 {
	switch {
	case h.b != nil:
		return h.b.stdev()
	case h.p != nil:
		return h.p.StdDev()
	}
	return h.h.StdDev()
}

// WithinStdev is the share (0..100) of samples within one standard deviation of the mean,
// wrk's "+/- Stdev" column.
func (h *Histogram) WithinStdev() float64 {
	n := h.Count()
	if n == 0 {
		return 0
	}
	mean, sd := h.meanUS(), h.stdevUS()
	lo, hi := mean-sd, mean+sd
	var in int64
	for _, b := range h.Buckets() {
		mid := float64(b.From/time.Microsecond+b.To/time.Microsecond) / 2
		if mid >= lo && mid <= hi {
			in += b.Count
		}
	}
	return 100 * float64(in) / float64(n)
}

// Bucket is one distinct recorded value range and its count.
type Bucket struct {
	From, To time.Duration
	Count    int64
}

// Buckets lists the non-empty buckets in ascending order.
func (h *Histogram) Buckets() []Bucket {
	if h.b != nil {
		return h.b.buckets()
	}
	var out []Bucket
	for _, b := range h.full().Distribution() { // a sparse one's bucket bounds come from the full shape
		if b.Count > 0 {
			out = append(out, Bucket{time.Duration(b.From) * time.Microsecond, time.Duration(b.To) * time.Microsecond, b.Count})
		}
	}
	return out
}

// Clone returns an independent copy.
func (h *Histogram) Clone() *Histogram {
	switch {
	case h == nil:
		return nil
	case h.b != nil:
		return &Histogram{b: h.b.clone()}
	case h.p != nil:
		return &Histogram{p: h.p.Clone()}
	}
	return &Histogram{h: h.h.Clone()}
}

// Equal reports whether both hold the same samples.
func (h *Histogram) Equal(o *Histogram) bool { return h.full().Equals(o.full()) }

// MarshalJSON encodes the histogram in the HdrHistogram V2 compressed base64 form.
func (h *Histogram) MarshalJSON() ([]byte, error) {
	b, err := encodeV2(h.full())
	if err != nil {
		return nil, fmt.Errorf("encoding histogram: %w", err)
	}
	return json.Marshal(string(b))
}

// UnmarshalJSON decodes the HdrHistogram V2 compressed base64 form.
func (h *Histogram) UnmarshalJSON(data []byte) error {
	if n := len(data); n >= 2 && data[0] == '"' && data[n-1] == '"' && bytes.IndexByte(data, '\\') < 0 {
		if b := decodeCompact(data[1 : n-1]); b != nil { // a run document's: made compact directly
			h.h, h.b, h.p = nil, b, nil
			return nil
		}
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("histogram: %w", err)
	}
	if err := checkV2Header(s); err != nil {
		return fmt.Errorf("decoding histogram: %w", err)
	}
	d, err := hdr.Decode([]byte(s))
	if err != nil {
		return fmt.Errorf("decoding histogram: %w", err)
	}
	// Re-home the samples in a histogram of the standard shape so merges are exact (one of
	// apiperf's has it already), then keep the smaller of its two forms.
	n := d
	if d.LowestTrackableValue() != int64(LowestLatency/time.Microsecond) || d.HighestTrackableValue() != int64(HighestLatency/time.Microsecond) ||
		d.SignificantFigures() != SigFigs {
		n = NewHistogram().h
		n.Merge(d)
	}
	h.h, h.b, h.p = n, nil, nil
	if b := binsOf(n); b != nil {
		h.h, h.b = nil, b
	}
	return nil
}

func fdur(us float64) time.Duration {
	if math.IsNaN(us) || math.IsInf(us, 0) {
		return 0
	}
	return time.Duration(us * float64(time.Microsecond))
}

// WriteSpectrum writes the detailed percentile spectrum (HdrHistogram's classic layout, as
// wrk2 prints it) with values in milliseconds.
// Its header has fixed-width columns, as HdrHistogram's classic format (hdrhistogram-go's
// printer, which writes the rows and the footer, separates the header with tabs).
func (h *Histogram) WriteSpectrum(w io.Writer) error {
	var b strings.Builder
	if _, err := h.full().PercentilesPrint(&b, 5, 1000); err != nil {
		return err
	}
	_, rows, _ := strings.Cut(b.String(), "\n")
	_, err := fmt.Fprintf(w, "%12s %12s %12s %12s\n%s", "Value", "Percentile", "TotalCount", "1/(1-Percentile)", rows)
	return err
}
