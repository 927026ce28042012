package measure

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// streamSample is a complete stream done at done with n messages, the first after first.
func streamSample(done time.Duration, n int32, first time.Duration) Sample {
	return Sample{Done: int64(done), Latency: int64(time.Second), Class: Response, Status: 200,
		X: &Extra{Stream: true, Messages: n, First: int64(first)}}
}

// streamedIntervals records streams and gaps over three intervals in two recorders and
// returns the emitted intervals and the step.
func streamedIntervals(t *testing.T) ([]*Interval, *Step) {
	t.Helper()
	recs := []*Recorder{NewRecorder(DefaultExpected(), false, 0), NewRecorder(DefaultExpected(), false, 0)}
	is := NewIntervalStream(recs, 0)
	var ivs []*Interval
	keep := func(iv *Interval) { ivs = append(ivs, iv) }
	recs[0].Add([]Sample{streamSample(100*time.Millisecond, 3, 90*time.Millisecond), streamSample(200*time.Millisecond, 0, 0)})
	recs[1].AddGaps([]int64{int64(300 * time.Millisecond), int64(1500 * time.Millisecond)}, []int64{int64(10 * time.Millisecond), int64(20 * time.Millisecond)})
	is.Seal(time.Second, keep)
	recs[1].Add([]Sample{streamSample(1200*time.Millisecond, 5, 120*time.Millisecond)})
	recs[0].Add([]Sample{{Done: int64(2500 * time.Millisecond), Latency: int64(time.Millisecond), Class: Response, Status: 200}})
	recs[0].AddGaps([]int64{int64(2600 * time.Millisecond)}, []int64{int64(30 * time.Millisecond)})
	is.Close(keep)
	return ivs, is.Step(time.Now(), 3*time.Second, nil)
}

// TestIntervalStreamsSumToStep: the intervals' stream counts and histograms add up exactly to
// the step's Streams; a stream counts where it completed, a gap where it ended.
func TestIntervalStreamsSumToStep(t *testing.T) {
	ivs, st := streamedIntervals(t)
	if len(ivs) != 3 {
		t.Fatalf("got %d intervals, want 3", len(ivs))
	}
	want := []struct{ streams, messages, first, gaps int64 }{
		{2, 3, 1, 1}, // two streams (one empty), one gap at 300 ms
		{1, 5, 1, 1}, // the stream done at 1.2 s and the gap at 1.5 s
		{0, 0, 0, 1}, // a plain response and a gap: the interval still has Streams
	}
	var sum *IntervalStreams
	for i, iv := range ivs {
		s := iv.Streams
		if s == nil {
			t.Fatalf("interval %d has no Streams", i)
		}
		w := want[i]
		if s.Streams != w.streams || s.Messages != w.messages || s.First.Count() != w.first || s.Gap.Count() != w.gaps {
			t.Errorf("interval %d: streams %d messages %d first %d gaps %d, want %+v", i, s.Streams, s.Messages, s.First.Count(), s.Gap.Count(), w)
		}
		sum = sum.Merge(s)
	}
	if sum.Streams != st.Streams.Streams || sum.Messages != st.Streams.Messages {
		t.Errorf("intervals sum to %d streams, %d messages; step has %d, %d", sum.Streams, sum.Messages, st.Streams.Streams, st.Streams.Messages)
	}
	if !sum.First.Equal(st.Streams.First) || !sum.Gap.Equal(st.Streams.Gap) {
		t.Errorf("intervals' first/gap histograms (%d, %d samples) differ from the step's (%d, %d)",
			sum.First.Count(), sum.Gap.Count(), st.Streams.First.Count(), st.Streams.Gap.Count())
	}
	if got := ivs[1].Streams.MessageRate(time.Second); got != 5 {
		t.Errorf("MessageRate = %v, want 5", got)
	}
}

// TestIntervalStreamsMergeExactly: merging intervals (scale-out) adds their streams exactly,
// leaves its inputs as they were, and survives JSON (the workers' wire).
func TestIntervalStreamsMergeExactly(t *testing.T) {
	a, _ := streamedIntervals(t)
	b, _ := streamedIntervals(t)
	js, err := json.Marshal(b[0])
	if err != nil {
		t.Fatal(err)
	}
	var wire Interval
	if err := json.Unmarshal(js, &wire); err != nil {
		t.Fatalf("json.Unmarshal(%s): %v", js, err)
	}
	before := a[0].Streams.First.Count()
	m := (*IntervalStreams)(nil).Merge(a[0].Streams).Merge(wire.Streams)
	if m.Streams != 4 || m.Messages != 6 || m.First.Count() != 2 || m.Gap.Count() != 2 {
		t.Errorf("merged %+v, want 4 streams, 6 messages, 2 first, 2 gaps", m)
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
// histograms tagged first and gap sum to the step's Streams.
func TestHlogStreamsRoundTrip(t *testing.T) {
	ivs, st := streamedIntervals(t)
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
		t.Errorf("log holds %v samples by tag; the step has %d responses, %d first messages, %d gaps",
			counts, st.Requests, st.Streams.First.Count(), st.Streams.Gap.Count())
	}
}
