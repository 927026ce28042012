package measure

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// streamSample is a complete stream done at done with n messages, the first after first
// (from when it was due, 30 ms before it was sent).
func streamSample(done time.Duration, n int32, first time.Duration) Sample {
	return Sample{Done: int64(done), Latency: int64(time.Second), Uncorrected: int64(time.Second - 30*time.Millisecond), Class: Response, Status: 200,
		X: &Extra{Stream: true, Messages: n, First: int64(first)}}
}

// streamedIntervals records streams and gaps over three intervals in two recorders (open:
// an open loop's) and returns the emitted intervals and the step.
func streamedIntervals(t *testing.T, open bool) ([]*Interval, *Step) {
	t.Helper()
	recs := []*Recorder{NewRecorder(DefaultExpected(), open, 0), NewRecorder(DefaultExpected(), open, 0)}
	is := NewIntervalStream(recs, 0)
	var ivs []*Interval
	keep := func(iv *Interval) { ivs = append(ivs, iv) }
	recs[0].Add([]Sample{streamSample(100*time.Millisecond, 3, 90*time.Millisecond), streamSample(200*time.Millisecond, 0, 0)})
	recs[1].AddGaps([]int64{int64(300 * time.Millisecond), int64(1500 * time.Millisecond)}, []int64{int64(10 * time.Millisecond), int64(20 * time.Millisecond)})
	is.Seal(time.Second, keep)
	recs[1].Add([]Sample{streamSample(1200*time.Millisecond, 5, 120*time.Millisecond)})
	recs[0].Add([]Sample{streamSample(1400*time.Millisecond, 2, 60*time.Millisecond)})
	recs[0].Add([]Sample{{Done: int64(2500 * time.Millisecond), Latency: int64(time.Millisecond), Uncorrected: int64(time.Millisecond), Class: Response, Status: 200}})
	recs[0].AddGaps([]int64{int64(2600 * time.Millisecond)}, []int64{int64(30 * time.Millisecond)})
	is.Close(keep)
	return ivs, is.Step(time.Now(), 3*time.Second, nil)
}

// TestIntervalStreamsSumToStep: the intervals' stream figures (counts, empty streams, fewest
// and most messages, histograms, in open loop the uncorrected time to first message) add up
// exactly to the step's Streams; a stream counts where it completed, a gap where it ended.
func TestIntervalStreamsSumToStep(t *testing.T) {
	for _, open := range []bool{false, true} {
		ivs, st := streamedIntervals(t, open)
		if len(ivs) != 3 {
			t.Fatalf("open %v: got %d intervals, want 3", open, len(ivs))
		}
		want := []struct{ streams, empty, messages, min, max, first, gaps int64 }{
			{2, 1, 3, 0, 3, 1, 1}, // two streams (one empty), one gap at 300 ms
			{2, 0, 7, 2, 5, 2, 1}, // the streams done at 1.2 s (5) and 1.4 s (2), the gap at 1.5 s
			{0, 0, 0, 0, 0, 0, 1}, // a plain response and a gap: the interval still has Streams
		}
		var sum *Streams
		for i, iv := range ivs {
			s := iv.Streams
			if s == nil {
				t.Fatalf("open %v: interval %d has no Streams", open, i)
			}
			w := want[i]
			got := struct{ streams, empty, messages, min, max, first, gaps int64 }{s.Streams, s.Empty, s.Messages, s.MinMessages, s.MaxMessages, s.First.Count(), s.Gap.Count()}
			if got != w {
				t.Errorf("open %v: interval %d: %+v, want %+v", open, i, got, w)
			}
			if (s.FirstUncorrected != nil) != open || open && s.FirstUncorrected.Count() != w.first {
				t.Errorf("open %v: interval %d: uncorrected time to first message %v, want %d samples in open loop only", open, i, s.FirstUncorrected, w.first)
			}
			sum = sum.Merge(s)
		}
		want1 := *st.Streams
		want1.First, want1.FirstUncorrected, want1.Gap = nil, nil, nil
		got1 := *sum
		got1.First, got1.FirstUncorrected, got1.Gap = nil, nil, nil
		if got1 != want1 {
			t.Errorf("open %v: intervals sum to %+v; the step has %+v", open, got1, want1)
		}
		if !sum.First.Equal(st.Streams.First) || !sum.Gap.Equal(st.Streams.Gap) {
			t.Errorf("open %v: intervals' first/gap histograms (%d, %d samples) differ from the step's (%d, %d)",
				open, sum.First.Count(), sum.Gap.Count(), st.Streams.First.Count(), st.Streams.Gap.Count())
		}
		if open && (!sum.FirstUncorrected.Equal(st.Streams.FirstUncorrected) || sum.FirstUncorrected.Max() > 91*time.Millisecond) {
			t.Errorf("intervals' uncorrected time to first message (%d samples, max %v) differs from the step's (%d) or is not from the send (want max 90ms)",
				sum.FirstUncorrected.Count(), sum.FirstUncorrected.Max(), st.Streams.FirstUncorrected.Count())
		}
		if got := ivs[1].Streams.MessageRate(time.Second); got != 7 {
			t.Errorf("MessageRate = %v, want 7", got)
		}
	}
}

// TestIntervalStreamsMergeExactly: merging intervals (scale-out) adds their streams exactly,
// leaves its inputs as they were, and survives JSON (the workers' wire).
func TestIntervalStreamsMergeExactly(t *testing.T) {
	a, _ := streamedIntervals(t, true)
	b, _ := streamedIntervals(t, true)
	js, err := json.Marshal(b[0])
	if err != nil {
		t.Fatal(err)
	}
	var wire Interval
	if err := json.Unmarshal(js, &wire); err != nil {
		t.Fatalf("json.Unmarshal(%s): %v", js, err)
	}
	before := a[0].Streams.First.Count()
	m := (*Streams)(nil).Merge(a[0].Streams).Merge(wire.Streams)
	if m.Streams != 4 || m.Empty != 2 || m.Messages != 6 || m.MinMessages != 0 || m.MaxMessages != 3 ||
		m.First.Count() != 2 || m.FirstUncorrected.Count() != 2 || m.Gap.Count() != 2 {
		t.Errorf("merged %+v, want 4 streams (2 empty), 6 messages (0 to 3), 2 first (corrected and uncorrected), 2 gaps", m)
	}
	if a[0].Streams.First.Count() != before {
		t.Errorf("merging changed its input: %d first samples, want %d", a[0].Streams.First.Count(), before)
	}
}

// TestIntervalsWithoutStreams: a run without streams has no stream record in any interval,
// and recording a plain response allocates nothing once its interval exists.
func TestIntervalsWithoutStreams(t *testing.T) {
	r := NewRecorder(DefaultExpected(), true, 0)
	is := NewIntervalStream([]*Recorder{r}, 0)
	is.ReuseIntervals()
	batch := []Sample{{Done: 10, Latency: int64(time.Millisecond), Uncorrected: int64(time.Millisecond), Class: Response, Status: 200}}
	r.Add(batch)
	if n := testing.AllocsPerRun(100, func() { r.Add(batch) }); n != 0 {
		t.Errorf("Add of a plain response: %v allocations, want 0", n)
	}
	r.mu.Lock()
	if iv := r.pending[0]; iv.streams != nil {
		t.Errorf("a plain response made the interval's stream record")
	}
	r.mu.Unlock()
	is.Close(func(iv *Interval) {
		if iv.Streams != nil {
			t.Errorf("interval %d has Streams %v, want nil", iv.Index, iv.Streams)
		}
	})
}

// TestHlogStreamsRoundTrip: hdrhistogram-go reads a streamed run's interval log, whose
// histograms tagged first, gap and (open loop) first_uncorrected sum to the step's Streams.
func TestHlogStreamsRoundTrip(t *testing.T) {
	for _, open := range []bool{false, true} {
		ivs, st := streamedIntervals(t, open)
		var buf bytes.Buffer
		lw := NewHlogWriter(&buf)
		if err := lw.Begin(time.Unix(1700000000, 0)); err != nil {
			t.Fatal(err)
		}
		for _, iv := range ivs {
			if err := lw.Write(iv); err != nil {
				t.Fatal(err)
			}
		}
		counts, _ := hlogCounts(t, buf.Bytes())
		if counts[""] != st.Requests || counts[HlogFirstTag] != st.Streams.First.Count() || counts[HlogGapTag] != st.Streams.Gap.Count() {
			t.Errorf("open %v: log holds %v samples by tag; the step has %d responses, %d first messages, %d gaps",
				open, counts, st.Requests, st.Streams.First.Count(), st.Streams.Gap.Count())
		}
		if n, ok := counts[HlogFirstRawTag]; ok != open || open && n != st.Streams.FirstUncorrected.Count() {
			t.Errorf("open %v: log holds %d uncorrected first messages (tag present %v); want the step's %d in open loop only",
				open, n, ok, st.Streams.FirstUncorrected.Count())
		}
	}
}
