package measure

import (
	"encoding/json"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"
)

// decoded returns h as a run document's reader gets it: encoded, then decoded.
func decoded(t *testing.T, h *Histogram) *Histogram {
	t.Helper()
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var d Histogram
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return &d
}

// TestCompactHistogramSameFigures: a histogram decoded into its compact form gives every
// figure the full form gives (percentiles, min, max, mean, stdev, wrk's +/- Stdev, buckets),
// encodes to the same document, and merges exactly into a full one and a full one into it.
func TestCompactHistogramSameFigures(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 50 {
		full := NewHistogram()
		n := 1 + rng.IntN(5000)
		for range n {
			d := time.Duration(rng.ExpFloat64() * float64(time.Duration(1+rng.IntN(50))*time.Millisecond))
			full.RecordN(d, 1+int64(rng.IntN(3)))
		}
		c := decoded(t, full)
		if c.b == nil {
			t.Fatalf("trial %d: a histogram of %d buckets was decoded in the full form", trial, len(full.Buckets()))
		}
		for _, p := range []float64{0, 1, 25, 50, 75, 90, 99, 99.9, 99.99, 100} {
			if a, b := full.Percentile(p), c.Percentile(p); a != b {
				t.Errorf("trial %d: p%g full %v, compact %v", trial, p, a, b)
			}
		}
		if full.Count() != c.Count() || full.Min() != c.Min() || full.Max() != c.Max() || full.Mean() != c.Mean() ||
			full.Stdev() != c.Stdev() || full.WithinStdev() != c.WithinStdev() {
			t.Errorf("trial %d: full count %d min %v max %v mean %v stdev %v within %v; compact %d %v %v %v %v %v", trial,
				full.Count(), full.Min(), full.Max(), full.Mean(), full.Stdev(), full.WithinStdev(),
				c.Count(), c.Min(), c.Max(), c.Mean(), c.Stdev(), c.WithinStdev())
		}
		if !slices.Equal(full.Buckets(), c.Buckets()) {
			t.Errorf("trial %d: buckets differ", trial)
		}
		a, _ := json.Marshal(full)
		b, _ := json.Marshal(c)
		if string(a) != string(b) {
			t.Errorf("trial %d: the compact form encodes differently", trial)
		}
		if !full.Equal(c) || !c.Equal(full) {
			t.Errorf("trial %d: Equal says the two forms differ", trial)
		}
		into := full.Clone()
		into.Merge(c)
		twice := full.Clone()
		twice.Merge(full)
		if !into.Equal(twice) {
			t.Errorf("trial %d: merging the compact form into a full one is not exact", trial)
		}
		cc := c.Clone()
		cc.Merge(full)
		if !cc.Equal(twice) || cc.b != nil {
			t.Errorf("trial %d: merging into a compact histogram is not exact, or it stayed compact", trial)
		}
		if !c.Equal(full) {
			t.Errorf("trial %d: merging into a clone changed the original", trial)
		}
	}
}

// TestCompactHistogramRecords: recording into a decoded histogram keeps what it held.
func TestCompactHistogramRecords(t *testing.T) {
	h := NewHistogram()
	h.Record(3 * time.Millisecond)
	c := decoded(t, h)
	c.Record(time.Second)
	if c.Count() != 2 || c.Max() < time.Second || c.Min() > 3*time.Millisecond {
		t.Fatalf("after recording into a decoded histogram: count %d, min %v, max %v", c.Count(), c.Min(), c.Max())
	}
	c.reset()
	if c.Count() != 0 {
		t.Fatalf("reset left %d samples", c.Count())
	}
	// A count that does not fit 32 bits keeps its exact value.
	w := NewHistogram()
	w.RecordN(5*time.Millisecond, 1<<33+7)
	w.Record(time.Millisecond)
	d := decoded(t, w)
	if d.b == nil || d.Count() != 1<<33+8 || d.Percentile(50) != w.Percentile(50) || !d.Equal(w) {
		t.Fatalf("a count over 32 bits: compact %v, count %d (want %d)", d.b != nil, d.Count(), int64(1<<33+8))
	}
}

// TestDecodedHistogramsSmall: a run document's histograms, decoded, take memory in proportion
// to what they hold, not 188 KB each (a 35 MB sweep took 1.4 GB to re-render).
func TestDecodedHistogramsSmall(t *testing.T) {
	h := NewHistogram()
	for i := range 20000 {
		h.Record(time.Duration(200+i%5000) * time.Microsecond)
	}
	enc, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	const n = 500
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	kept := make([]Histogram, n)
	for i := range kept {
		if err := json.Unmarshal(enc, &kept[i]); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	if buckets := int64(len(h.Buckets())); per > buckets*2+1024 || per > int64(fullBytes())/2 {
		t.Errorf("a decoded histogram of %d buckets of small counts keeps %d bytes (want at most %d, 2 a bucket); the full form is %d", buckets, per, buckets*2+1024, fullBytes())
	}
	runtime.KeepAlive(kept)
}
