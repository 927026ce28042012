package measure

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// latencies returns n latencies of a load's shape: most near a millisecond, a tail to seconds,
// and the range's ends (clamped).
func latencies(seed uint64, n int) []time.Duration {
	r := rand.New(rand.NewPCG(seed, 45))
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = time.Duration(200+r.ExpFloat64()*800) * time.Microsecond
		if i%97 == 0 {
			out[i] = time.Duration(r.Int64N(int64(3 * time.Second)))
		}
	}
	return append(out, 0, 2*time.Hour)
}

// A sparse histogram reads exactly as a full one of the same samples: every statistic, the
// buckets, the interchange encoding and the spectrum.
func TestSparseHistogramReadsAsFull(t *testing.T) {
	for _, n := range []int{0, 1, 10, 5000} {
		full, sparse := NewHistogram(), newSparseHistogram()
		ls := latencies(uint64(n), n)
		if n < 10 {
			ls = ls[:n] // without the range's ends
		}
		for _, d := range ls {
			full.Record(d)
			sparse.addBucket(micros(d), 1)
		}
		for _, p := range []float64{-1, 0, 0.1, 1, 25, 50, 75, 90, 99, 99.9, 99.99, 100, 101} {
			if g, w := sparse.Percentile(p), full.Percentile(p); g != w {
				t.Errorf("%d samples: sparse Percentile(%v) = %v, full %v", n, p, g, w)
			}
		}
		got := []any{sparse.Count(), sparse.Min(), sparse.Max(), sparse.Mean(), sparse.Stdev(), sparse.WithinStdev()}
		want := []any{full.Count(), full.Min(), full.Max(), full.Mean(), full.Stdev(), full.WithinStdev()}
		if !slices.Equal(got, want) {
			t.Errorf("%d samples: sparse count, min, max, mean, stdev, within = %v; full %v", n, got, want)
		}
		if g, w := sparse.Buckets(), full.Buckets(); !slices.Equal(g, w) {
			t.Errorf("%d samples: sparse Buckets() = %v, full %v", n, g, w)
		}
		gj, err1 := sparse.MarshalJSON()
		wj, err2 := full.MarshalJSON()
		if err1 != nil || err2 != nil || !bytes.Equal(gj, wj) {
			t.Errorf("%d samples: sparse encodes as %s (%v), full as %s (%v)", n, gj, err1, wj, err2)
		}
		var gs, ws bytes.Buffer
		if err1, err2 := sparse.WriteSpectrum(&gs), full.WriteSpectrum(&ws); err1 != nil || err2 != nil || gs.String() != ws.String() {
			t.Errorf("%d samples: sparse spectrum (%v):\n%s\nfull (%v):\n%s", n, err1, gs.String(), err2, ws.String())
		}
		if c := sparse.Clone(); !c.Equal(full) || c.p == nil {
			t.Errorf("%d samples: the clone of a sparse histogram equals the full one %v, is sparse %v; want both", n, c.Equal(full), c.p != nil)
		}
		merged := NewHistogram()
		merged.Merge(sparse)
		if !merged.Equal(full) {
			t.Errorf("%d samples: a sparse histogram merged into an empty one gives %d samples, want %d", n, merged.Count(), full.Count())
		}
		sparse.Record(time.Millisecond) // recording turns it full
		full.Record(time.Millisecond)
		if sparse.p != nil || !sparse.Equal(full) {
			t.Errorf("%d samples: after Record, sparse form kept %v, equal %v; want full and equal", n, sparse.p != nil, sparse.Equal(full))
		}
	}
}

// Each take hands over exactly what was recorded since the last one, and reset drops it.
func TestIntervalHistogramTake(t *testing.T) {
	ih := newIntervalHistogram()
	for i, n := range []int{3000, 0, 1, 2000, 5} { // rows: a busy second, an empty one, one sample, a second busy one, a quiet one
		want := NewHistogram()
		for _, d := range latencies(uint64(i), n)[:n] {
			ih.Record(d)
			want.Record(d)
		}
		got := newSparseHistogram()
		ih.take(got)
		if !got.Equal(want) {
			t.Errorf("take %d: got %d samples (p99 %v), want %d (p99 %v)", i, got.Count(), got.Percentile(99), want.Count(), want.Percentile(99))
		}
		ih.reset() // after a take: nothing to drop
		ih.Record(time.Second)
		ih.reset() // drops the one second
	}
	last := NewHistogram()
	ih.take(last)
	if last.Count() != 0 {
		t.Errorf("take after reset: %d samples, want 0", last.Count())
	}
}

// BenchmarkIntervalRecord is the per-sample cost of recording into an interval's histogram,
// as it was (a full histogram, reset at every interval) and as it is (never reset).
func BenchmarkIntervalRecord(b *testing.B) {
	lat := latencies(1, 1<<16)
	b.Run("full", func(b *testing.B) {
		h := NewHistogram()
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			h.Record(lat[i&(1<<16-1)])
		}
	})
	b.Run("interval", func(b *testing.B) {
		h := newIntervalHistogram()
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			h.Record(lat[i&(1<<16-1)])
		}
	})
}

// BenchmarkIntervalTake is the once-a-second cost of handing an interval of 50,000 samples to
// the stream's merged interval, against merging a full one into a full one and resetting it.
func BenchmarkIntervalTake(b *testing.B) {
	lat := latencies(2, 50000)
	b.Run("full", func(b *testing.B) {
		src, dst := NewHistogram(), NewHistogram()
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			for _, d := range lat {
				src.Record(d)
			}
			dst.Merge(src)
			src.reset()
			dst.reset()
		}
	})
	b.Run("interval", func(b *testing.B) {
		src, dst := newIntervalHistogram(), newSparseHistogram()
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			for _, d := range lat {
				src.Record(d)
			}
			src.take(dst)
			dst.reset()
		}
	})
}
