package measure

import (
	"bytes"
	"encoding/json"
	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"slices"
	"testing"
	"time"
)

func TestHistogramPercentiles(t *testing.T) {
	h := NewHistogram()
	for i := 1; i <= 1000; i++ {
		h.Record(time.Duration(i) * time.Millisecond)
	}
	cases := []struct {
		p    float64
		want time.Duration
	}{
		{50, 500 * time.Millisecond},   // median of 1..1000 ms
		{99, 990 * time.Millisecond},   // 990th value
		{100, 1000 * time.Millisecond}, // the maximum
	}
	for _, c := range cases {
		got := h.Percentile(c.p)
		if diff := got - c.want; diff < -c.want/500 || diff > c.want/500 {
			t.Errorf("Percentile(%v) = %v, want %v within 0.2%%", c.p, got, c.want)
		}
	}
	if h.Count() != 1000 {
		t.Errorf("Count() = %d, want 1000", h.Count())
	}
}

func TestHistogramClamps(t *testing.T) {
	h := NewHistogram()
	h.Record(0)             // below 1 µs: clamped up, still counted
	h.Record(3 * time.Hour) // above 1 h: clamped down, still counted
	if h.Count() != 2 {
		t.Fatalf("Count() = %d after two out-of-range samples, want 2", h.Count())
	}
	if h.Max() < 59*time.Minute {
		t.Errorf("Max() = %v, want about 1h", h.Max())
	}
}

func TestHistogramJSONRoundTrip(t *testing.T) {
	h := NewHistogram()
	for i := 0; i < 5000; i++ {
		h.Record(time.Duration(i*37%9000) * time.Microsecond)
	}
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	if string(b[:5]) != `"HIST` {
		t.Errorf("encoding starts %q, want the HdrHistogram base64 cookie \"HIST", b[:5])
	}
	var back Histogram
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !back.Equal(h) {
		t.Errorf("round trip changed the histogram: count %d -> %d, p99 %v -> %v", h.Count(), back.Count(), h.Percentile(99), back.Percentile(99))
	}
}

func TestWithinStdev(t *testing.T) {
	h := NewHistogram()
	for i := 0; i < 90; i++ {
		h.Record(time.Millisecond)
	}
	for i := 0; i < 10; i++ {
		h.Record(100 * time.Millisecond)
	}
	// mean 10.9 ms, stdev ~29.7 ms: the 90 fast samples are within, the 10 slow ones are not.
	if got := h.WithinStdev(); got < 89.9 || got > 90.1 {
		t.Errorf("WithinStdev() = %v, want 90", got)
	}
}

func TestStatusSet(t *testing.T) {
	s := DefaultExpected()
	for _, c := range []struct {
		code int
		want bool
	}{
		{200, true},  // 2xx is success
		{304, true},  // 3xx is success
		{399, true},  // upper edge
		{404, false}, // 4xx is not
		{500, false}, // 5xx is not
		{199, false}, // below the range
		{-1, false},  // out of bounds
		{1200, false},
	} {
		if got := s.Has(c.code); got != c.want {
			t.Errorf("DefaultExpected().Has(%d) = %v, want %v", c.code, got, c.want)
		}
	}
}

func recordSome(r *Recorder, offset time.Duration, n int, class Class, status int16) {
	batch := make([]Sample, 0, n)
	for i := 0; i < n; i++ {
		batch = append(batch, Sample{Done: int64(offset) + int64(i)*int64(time.Millisecond), Latency: int64(time.Millisecond * time.Duration(1+i%7)), Bytes: 100, Status: status, Class: class})
	}
	r.Add(batch)
}

func TestCombineCounts(t *testing.T) {
	r1 := NewRecorder(DefaultExpected(), false, 0)
	r2 := NewRecorder(DefaultExpected(), false, 0)
	recordSome(r1, 0, 500, Response, 200)
	recordSome(r2, time.Second, 300, Response, 500)
	recordSome(r2, time.Second, 7, TimeoutError, 0)
	recordSome(r1, 0, 3, ConnectError, 0)
	s := Combine(time.Unix(100, 0), 2*time.Second, []*Recorder{r1, r2}, nil)
	if s.Attempts != 810 || s.Requests != 800 || s.Successes != 500 {
		t.Errorf("attempts/requests/successes = %d/%d/%d, want 810/800/500", s.Attempts, s.Requests, s.Successes)
	}
	if s.Errors != (Errors{Connect: 3, Timeout: 7, Status: 300}) {
		t.Errorf("errors = %+v, want connect 3 timeout 7 status 300", s.Errors)
	}
	if s.Status[200] != 500 || s.Status[500] != 300 {
		t.Errorf("status = %v", s.Status)
	}
	if s.Latency.Count() != 800 || s.AllAttempts.Count() != 807 {
		t.Errorf("latency count %d (want 800), all attempts %d (want 807: responses + timeouts)", s.Latency.Count(), s.AllAttempts.Count())
	}
	if got := s.QPS(); got != 400 {
		t.Errorf("QPS() = %v, want 800 requests / 2 s = 400", got)
	}
	if got, want := s.SuccessRate(), 100*500.0/810; got != want {
		t.Errorf("SuccessRate() = %v, want %v", got, want)
	}
	var tl int64
	for _, sec := range s.Timeline {
		tl += sec.Requests
	}
	if tl != s.Requests {
		t.Errorf("timeline sums to %d requests, want %d", tl, s.Requests)
	}
}

func TestStepMergeIsExact(t *testing.T) {
	mk := func(start time.Time, n int, status int16) *Step {
		r := NewRecorder(DefaultExpected(), true, 0)
		recordSome(r, 0, n, Response, status)
		return Combine(start, time.Second, []*Recorder{r}, nil)
	}
	t0 := time.Unix(1000, 0)
	a, b := mk(t0, 400, 200), mk(t0.Add(3*time.Second), 600, 404)
	all := NewHistogram()
	all.Merge(a.Latency)
	all.Merge(b.Latency)
	a.Merge(b)
	if a.Requests != 1000 || a.Successes != 400 || a.Errors.Status != 600 {
		t.Errorf("merged requests/successes/status errors = %d/%d/%d, want 1000/400/600", a.Requests, a.Successes, a.Errors.Status)
	}
	if !a.Latency.Equal(all) {
		t.Error("merged latency histogram differs from merging the histograms directly")
	}
	if time.Duration(a.Elapsed) != 4*time.Second {
		t.Errorf("merged window = %v, want the union 4s", time.Duration(a.Elapsed))
	}
	if len(a.Timeline) != 2 || a.Timeline[1].T != 3 {
		t.Errorf("merged timeline = %+v, want seconds 0 and 3", a.Timeline)
	}
	if a.Threads != 2 {
		t.Errorf("threads = %d, want 2", a.Threads)
	}
}

func TestStepJSONRoundTrip(t *testing.T) {
	r := NewRecorder(DefaultExpected(), true, 0)
	recordSome(r, 0, 50, Response, 200)
	s := Combine(time.Unix(5, 0).UTC(), 1500*time.Millisecond, []*Recorder{r}, nil)
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back Step
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	b2, _ := json.Marshal(&back)
	if string(b) != string(b2) {
		t.Errorf("JSON round trip differs:\n%s\n%s", b, b2)
	}
}

func FuzzHistogramJSON(f *testing.F) {
	h := NewHistogram()
	h.Record(time.Millisecond)
	b, _ := json.Marshal(h)
	f.Add(b)
	f.Add([]byte(`"HISTFAAAAB"`))
	f.Add([]byte(`12`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var h Histogram
		if err := json.Unmarshal(data, &h); err != nil {
			return
		}
		if h.Count() < 0 {
			t.Errorf("decoded histogram has negative count %d", h.Count())
		}
	})
}

// TestIntervalStreamLateSample: a sample that reaches its recorder after its interval was
// sealed counts in the oldest open interval, so the intervals still sum to the totals.
func TestIntervalStreamLateSample(t *testing.T) {
	r := NewRecorder(DefaultExpected(), false, 0)
	st := NewIntervalStream([]*Recorder{r}, time.Second)
	var got []*Interval
	emit := func(iv *Interval) { got = append(got, iv) }
	r.Add([]Sample{{Done: int64(100 * time.Millisecond), Latency: int64(time.Millisecond), Status: 200}})
	st.Seal(2500*time.Millisecond, emit) // intervals 0 and 1 are over
	if len(got) != 2 || got[0].Requests != 1 || got[1].Requests != 0 {
		t.Fatalf("after the first seal: %d intervals, want 2 (the first with 1 request, the second empty)", len(got))
	}
	r.Add([]Sample{{Done: int64(1500 * time.Millisecond), Latency: int64(time.Millisecond), Status: 500}}) // late
	st.Close(emit)
	s := st.Step(time.Unix(0, 0), 3*time.Second, nil)
	if len(got) != 3 || got[2].Index != 2 || got[2].Requests != 1 || got[2].Errors.Status != 1 {
		t.Fatalf("late sample: intervals %d, want it in interval 2 as a status error", len(got))
	}
	if len(s.Timeline) != 3 || s.Requests != 2 {
		t.Errorf("step: %d timeline entries and %d requests, want 3 and 2", len(s.Timeline), s.Requests)
	}
}

// TestHlogRoundTrip writes intervals as an interval log and reads it back with
// hdrhistogram-go's log reader: the corrected histograms sum to the step's latency.
func TestHlogRoundTrip(t *testing.T) {
	r := NewRecorder(DefaultExpected(), true, 0)
	st := NewIntervalStream([]*Recorder{r}, time.Second)
	recordSome(r, 0, 300, Response, 200)
	recordSome(r, 1500*time.Millisecond, 200, Response, 200)
	var buf bytes.Buffer
	lw := NewHlogWriter(&buf)
	start := time.Unix(1700000000, 250e6)
	if err := lw.Begin(start); err != nil {
		t.Fatal(err)
	}
	st.Close(func(iv *Interval) {
		if err := lw.Write(iv); err != nil {
			t.Fatal(err)
		}
	})
	s := st.Step(start, 2*time.Second, nil)
	counts, lines := hlogCounts(t, buf.Bytes())
	corrected, uncorrected := counts[""], counts[HlogUncorrectedTag]
	if lines != 4 || corrected != s.Requests || uncorrected != s.Requests {
		t.Errorf("log has %d histograms, %d corrected and %d uncorrected samples; want 4, %d, %d\n%s", lines, corrected, uncorrected, s.Requests, s.Requests, buf.String())
	}
}

// hlogCounts reads an interval log with hdrhistogram-go's reader: the samples by tag ("":
// untagged) and the number of histograms.
func hlogCounts(t *testing.T, log []byte) (map[string]int64, int) {
	t.Helper()
	rd := hdr.NewHistogramLogReader(bytes.NewReader(log))
	counts, lines := map[string]int64{}, 0
	for {
		h, err := rd.NextIntervalHistogram()
		if err != nil {
			t.Fatalf("reading the log back: %v\n%s", err, log)
		}
		if h == nil {
			return counts, lines
		}
		lines++
		counts[h.Tag()] += h.TotalCount()
	}
}

// TestIntervalJSONRoundTrip: an interval (what scale-out workers stream) survives JSON.
func TestIntervalJSONRoundTrip(t *testing.T) {
	r := NewRecorder(DefaultExpected(), true, 2)
	st := NewIntervalStream([]*Recorder{r}, time.Second)
	r.Add([]Sample{{Done: 1, Latency: int64(time.Millisecond), Uncorrected: int64(time.Microsecond * 500), Status: 200, Endpoint: 1},
		{Done: 2, Class: TimeoutError, Latency: int64(time.Second)}})
	var iv *Interval
	st.Close(func(i *Interval) { iv = i })
	b, err := json.Marshal(iv)
	if err != nil {
		t.Fatal(err)
	}
	var back Interval
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	b2, _ := json.Marshal(&back)
	if string(b) != string(b2) || back.ByEnd[1][200] != 1 || back.Errors.Timeout != 1 || !back.Uncorrected.Equal(iv.Uncorrected) {
		t.Errorf("interval JSON round trip differs:\n%s\n%s", b, b2)
	}
}

// A stream that reuses its intervals and their histograms emits what one that allocates them
// emits (each interval's counts, statuses, latency and streams as it is emitted, the step's
// timeline), and allocates no new ones once it has spares.
func TestIntervalStreamReuse(t *testing.T) {
	type seen struct {
		requests, ok200                int64
		count, p99, unco               int64
		streams, first, gaps, firstP99 int64
	}
	intervals := map[*Interval]bool{}
	run := func(reuse bool) ([]seen, *Step, int) {
		recs := []*Recorder{NewRecorder(DefaultExpected(), true, 0), NewRecorder(DefaultExpected(), true, 0)}
		st := NewIntervalStream(recs, time.Second)
		if reuse {
			st.ReuseIntervals()
		}
		var got []seen
		fresh := map[*Histogram]bool{}
		emit := func(iv *Interval) {
			fresh[iv.Latency], fresh[iv.Uncorrected] = true, true
			if reuse {
				intervals[iv] = true
			}
			ss := iv.Streams
			fresh[ss.First], fresh[ss.Gap] = true, true
			got = append(got, seen{iv.Requests, iv.Status[200], iv.Latency.Count(), int64(iv.Latency.Percentile(99)), iv.Uncorrected.Count(),
				ss.Streams, ss.First.Count(), ss.Gap.Count(), int64(ss.First.Percentile(99))})
		}
		for sec := range 6 {
			at := time.Duration(sec) * time.Second
			for i, r := range recs {
				recordSome(r, at, 100*(sec+1)+i, Response, 200)
				r.Add([]Sample{streamSample(at+time.Millisecond, int32(i+2), time.Duration(sec+1)*10*time.Millisecond)})
				if sec != 3 { // a second without gaps
					r.AddGaps([]int64{int64(at + 2*time.Millisecond)}, []int64{int64(time.Millisecond)})
				}
			}
			st.Seal(at+time.Second, emit)
		}
		st.Close(emit)
		return got, st.Step(time.Unix(0, 0), 6*time.Second, nil), len(fresh)
	}
	want, wantStep, _ := run(false)
	got, gotStep, histograms := run(true)
	if len(want) != 6 || !slices.Equal(got, want) {
		t.Errorf("intervals with reuse %v; want %v", got, want)
	}
	if !slices.Equal(gotStep.Timeline, wantStep.Timeline) || gotStep.Requests != wantStep.Requests {
		t.Errorf("step with reuse: timeline %v, %d requests; want %v, %d", gotStep.Timeline, gotStep.Requests, wantStep.Timeline, wantStep.Requests)
	}
	if histograms > 8 {
		t.Errorf("a reusing stream used %d histograms for 6 open-loop intervals of streams; want at most 8", histograms)
	}
	if len(intervals) > 2 {
		t.Errorf("a reusing stream made %d intervals for 6; want at most 2 (one emitted, one filling)", len(intervals))
	}
}

// TestAllAttemptsTimeouts: the all-attempts view is every response's latency and every timed-out
// attempt's, kept apart (the timeouts' histogram made at the first one); other failures are not in it.
func TestAllAttemptsTimeouts(t *testing.T) {
	for _, tc := range []struct {
		name    string
		samples []Sample
		want    int64 // samples in AllAttempts
		max     time.Duration
	}{
		{"responses only: no timeouts' histogram", []Sample{{Done: 1, Latency: int64(time.Millisecond), Status: 200}, {Done: 2, Latency: int64(2 * time.Millisecond), Status: 500}}, 2, 2 * time.Millisecond},
		{"a timeout adds its latency", []Sample{{Done: 1, Latency: int64(time.Millisecond), Status: 200}, {Done: 2, Latency: int64(time.Second), Class: TimeoutError}}, 2, time.Second},
		{"a connect error adds nothing", []Sample{{Done: 1, Latency: int64(time.Millisecond), Status: 200}, {Done: 2, Latency: int64(time.Second), Class: ConnectError}}, 1, time.Millisecond},
	} {
		r := NewRecorder(DefaultExpected(), false, 0)
		r.Add(tc.samples)
		s := Combine(time.Time{}, time.Second, []*Recorder{r}, nil)
		if got, max := s.AllAttempts.Count(), s.AllAttempts.Max(); got != tc.want || max < tc.max-tc.max/1000 || max > tc.max+tc.max/1000 {
			t.Errorf("%s: AllAttempts has %d samples, max %v; want %d, max %v", tc.name, got, max, tc.want, tc.max)
		}
		if s.Latency.Count() != int64(countResponses(tc.samples)) {
			t.Errorf("%s: Latency has %d samples, want %d", tc.name, s.Latency.Count(), countResponses(tc.samples))
		}
	}
}

func countResponses(ss []Sample) int {
	n := 0
	for _, s := range ss {
		if s.Class == Response {
			n++
		}
	}
	return n
}

// TestLatencyFromIntervals: a step's latency (and the open loop's uncorrected latency) is read
// from its recorder's interval histograms, including those of intervals dropped from the spares
// (four open at once, two kept).
func TestLatencyFromIntervals(t *testing.T) {
	for _, open := range []bool{false, true} {
		testLatencyFromIntervals(t, open)
	}
}

func testLatencyFromIntervals(t *testing.T, open bool) {
	r := NewRecorder(DefaultExpected(), open, 0)
	var batch []Sample
	for sec := range 4 {
		for i := range 10 {
			lat := time.Duration(sec+1) * time.Millisecond
			batch = append(batch, Sample{Done: int64(sec)*int64(time.Second) + int64(i), Latency: int64(lat), Uncorrected: int64(lat / 2), Status: 200})
		}
	}
	r.Add(batch)
	if len(r.pending) != 4 {
		t.Fatalf("open %v: pending intervals = %d, want 4", open, len(r.pending))
	}
	s := Combine(time.Time{}, 4*time.Second, []*Recorder{r}, nil)
	if r.retired == nil || r.retired.Count() != 20 {
		t.Errorf("open %v: retired = %v, want the 20 samples of the two intervals dropped from the spares", open, r.retired)
	}
	hs := []*Histogram{s.Latency, s.AllAttempts}
	if open {
		if s.Uncorrected == nil || s.Uncorrected.Count() != 40 || s.Uncorrected.Max() > 2*time.Millisecond+2*time.Microsecond {
			t.Fatalf("open loop: uncorrected = %v, want 40 samples up to 2ms", s.Uncorrected)
		}
	} else if s.Uncorrected != nil {
		t.Errorf("closed loop: uncorrected = %v, want none", s.Uncorrected)
	}
	for _, h := range hs {
		if h.Count() != 40 || h.Min() < time.Millisecond-time.Microsecond || h.Max() > 4*time.Millisecond+4*time.Microsecond {
			t.Errorf("open %v: step histogram has %d samples, min %v, max %v; want 40 from 1ms to 4ms", open, h.Count(), h.Min(), h.Max())
		}
	}
	var sum int64
	for _, sec := range s.Timeline {
		sum += sec.Requests
	}
	if sum != 40 {
		t.Errorf("open %v: the timeline counts %d requests, want 40 (the step's)", open, sum)
	}
}
