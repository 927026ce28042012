package measure

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestHistogramStatistics(t *testing.T) {
	h := NewHistogram()
	h.RecordN(time.Millisecond, 3)
	h.Record(5 * time.Millisecond)
	within := func(got, want time.Duration) bool { d := got - want; return d > -want/500 && d < want/500 }
	if h.Count() != 4 || !within(h.Min(), time.Millisecond) || !within(h.Max(), 5*time.Millisecond) || !within(h.Mean(), 2*time.Millisecond) {
		t.Errorf("count %d, min %v, max %v, mean %v; want 4, 1ms, 5ms, 2ms", h.Count(), h.Min(), h.Max(), h.Mean())
	}
	// Population stdev of {1,1,1,5} ms is sqrt(3) ms.
	if sd := h.Stdev(); !within(sd, 1732*time.Microsecond) {
		t.Errorf("stdev %v, want 1.732ms", sd)
	}
	if p := h.Percentile(75); !within(p, time.Millisecond) {
		t.Errorf("p75 %v, want 1ms (3 of 4 samples)", p)
	}
	empty := NewHistogram()
	if empty.Count() != 0 || empty.Percentile(99) != 0 || empty.Mean() != 0 || empty.WithinStdev() != 0 {
		t.Errorf("empty histogram: count %d, p99 %v, mean %v, within %v; want zeros", empty.Count(), empty.Percentile(99), empty.Mean(), empty.WithinStdev())
	}
}

func TestHistogramBuckets(t *testing.T) {
	h := NewHistogram()
	h.RecordN(100*time.Microsecond, 2)
	h.Record(10 * time.Millisecond)
	b := h.Buckets()
	if len(b) != 2 || b[0].Count != 2 || b[1].Count != 1 || b[0].From > 100*time.Microsecond || b[1].To < 10*time.Millisecond {
		t.Errorf("Buckets() = %+v, want two non-empty buckets around 100us (2) and 10ms (1)", b)
	}
	var total int64
	for _, x := range b {
		total += x.Count
		if x.From > x.To {
			t.Errorf("bucket %+v runs backwards", x)
		}
	}
	if total != h.Count() {
		t.Errorf("buckets hold %d samples, histogram %d", total, h.Count())
	}
}

// Merge is exact and Clone is independent: what distributed runs rely on.
func TestHistogramMergeCloneEqual(t *testing.T) {
	a, b := NewHistogram(), NewHistogram()
	for i := 1; i <= 100; i++ {
		a.Record(time.Duration(i) * time.Millisecond)
		b.Record(time.Duration(i) * time.Microsecond)
	}
	both := a.Clone()
	both.Merge(b)
	both.Merge(nil) // a no-op
	if both.Count() != 200 || a.Count() != 100 {
		t.Errorf("merged count %d (want 200), original %d (want 100: Clone must not share)", both.Count(), a.Count())
	}
	if both.Equal(a) || !a.Clone().Equal(a) {
		t.Error("Equal: a merged histogram must differ from its part, a clone must equal its source")
	}
	// Merging in the other order gives the same histogram.
	other := b.Clone()
	other.Merge(a)
	if !other.Equal(both) {
		t.Error("merge is not commutative")
	}
}

func TestHistogramWriteSpectrum(t *testing.T) {
	h := NewHistogram()
	for i := 1; i <= 1000; i++ {
		h.Record(time.Duration(i) * time.Microsecond)
	}
	var buf bytes.Buffer
	if err := h.WriteSpectrum(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	// wrk2's layout: a header line, value / percentile / total count / 1/(1-percentile) rows, and
	// the mean and count at the end; values in milliseconds.
	for _, want := range []string{"Value", "Percentile", "TotalCount", "#[Mean", "Total count", "1000"} {
		if !strings.Contains(out, want) {
			t.Errorf("spectrum lacks %q:\n%s", want, out)
		}
	}
}

func TestHistogramJSONErrors(t *testing.T) {
	for _, in := range []string{`42`, `"not base64!"`, `"SElTVA=="`} {
		var h Histogram
		if err := json.Unmarshal([]byte(in), &h); err == nil {
			t.Errorf("Unmarshal(%s) = nil error, want one", in)
		}
	}
}

func TestStatusSetAddRange(t *testing.T) {
	var s StatusSet
	s.AddRange(-5, 2)     // clamped at 0
	s.AddRange(998, 2000) // clamped at 999
	s.AddRange(404, 404)
	for code, want := range map[int]bool{0: true, 2: true, 3: false, 404: true, 405: false, 999: true, 1000: false} {
		if s.Has(code) != want {
			t.Errorf("Has(%d) = %v, want %v", code, !want, want)
		}
	}
}

// A scenario mix: per-endpoint counts and statuses add up to the step's.
func TestRecorderEndpoints(t *testing.T) {
	r := NewRecorder(DefaultExpected(), false, 2)
	r.Window(0, 500*time.Millisecond)
	r.Add([]Sample{
		{Done: 600 * ms, Latency: ms, Status: 200, Class: Response, Endpoint: 0}, // drained
		{Done: ms, Latency: ms, Status: 200, Class: Response, Endpoint: 0},
		{Done: ms, Latency: ms, Status: 404, Class: Response, Endpoint: 1},
		{Done: ms, Class: ReadError, Endpoint: 1},
		{Done: ms, Latency: ms, Status: 200, Class: Response, Endpoint: 1},
	})
	if req, errs := r.Progress(); req != 4 || errs != 2 {
		t.Errorf("Progress() = %d, %d; want 4 responses and 2 errors (a 404, a read error)", req, errs)
	}
	s := Combine(time.Unix(0, 0), time.Second, []*Recorder{r}, []string{"home", "cart"})
	if len(s.Endpoints) != 2 {
		t.Fatalf("endpoints %+v", s.Endpoints)
	}
	home, cart := s.Endpoints[0], s.Endpoints[1]
	if home.Name != "home" || home.Requests != 2 || home.Drained != 1 || home.Successes != 2 {
		t.Errorf("home = %+v", home)
	}
	if cart.Name != "cart" || cart.Requests != 2 || cart.Successes != 1 || cart.Errors != (Errors{Read: 1, Status: 1}) || cart.Status[404] != 1 {
		t.Errorf("cart = %+v", cart)
	}
	if cart.LatencySummary.Count != 2 {
		t.Errorf("cart latency summary %+v, want 2 samples", cart.LatencySummary)
	}
}

func TestAddStatus(t *testing.T) {
	got := AddStatus(nil, map[int]int64{200: 2})
	got = AddStatus(got, map[int]int64{200: 1, 500: 4})
	if len(got) != 2 || got[200] != 3 || got[500] != 4 {
		t.Errorf("AddStatus = %v, want 200=3 500=4", got)
	}
}

// TestSpectrumClassicLayout checks the detailed percentile spectrum as wrk2 prints it: a
// header in fixed-width columns (no tabs), a blank line, then rows in milliseconds.
func TestSpectrumClassicLayout(t *testing.T) {
	h := NewHistogram()
	h.RecordN(time.Millisecond, 99)
	h.Record(40 * time.Millisecond)
	var b bytes.Buffer
	if err := h.WriteSpectrum(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if want := "       Value   Percentile   TotalCount 1/(1-Percentile)"; lines[0] != want || lines[1] != "" {
		t.Fatalf("spectrum starts %q, %q; want %q and a blank line", lines[0], lines[1], want)
	}
	if !strings.HasPrefix(strings.TrimSpace(lines[2]), "1.000 ") || !strings.Contains(b.String(), "#[Max     =       40.") {
		t.Errorf("spectrum rows are not in milliseconds (first row %q):\n%s", lines[2], b.String())
	}
}
