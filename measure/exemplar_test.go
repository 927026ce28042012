package measure

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"
)

// randomSamples makes n responses with long-tailed latencies, each with a distinct trace id,
// some on endpoint 1, and with Server-Timing metrics db (a fixed share) and app.
func randomSamples(rng *rand.Rand, n int, rec *Recorder) []Sample {
	db, app := rec.Metric([]byte("db")), rec.Metric([]byte("app"))
	out := make([]Sample, n)
	for i := range out {
		lat := int64(200*time.Microsecond) + int64(rng.ExpFloat64()*float64(3*time.Millisecond))
		if rng.IntN(200) == 0 {
			lat += int64(100 * time.Millisecond)
		}
		s := Sample{Done: int64(3*time.Second) + int64(i)*int64(time.Millisecond), Latency: lat, Uncorrected: lat / 2, Class: Response,
			Status: 200, Conn: int32(rng.IntN(50)), Endpoint: uint8(rng.IntN(2)), X: &Extra{}}
		s.X.Trace[0], s.X.Trace[15] = byte(i), byte(i>>8)
		s.X.Trace[7] = byte(rng.Uint32())
		s.X.Timing.Add(db, float64(lat)/1e6*0.5)
		s.X.Timing.Add(app, 1)
		out[i] = s
	}
	return out
}

// TestExemplarsMergeExactly: the slowest list, the pool and the bands of a step recorded
// on three recorders, or as three steps merged through JSON with different window starts,
// are those of one recorder that saw every response.
func TestExemplarsMergeExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	names := []string{"home", "cart"}
	one := NewRecorder(DefaultExpected(), true, 2)
	samples := randomSamples(rng, 5000, one)
	one.Add(samples)
	want := Combine(time.Unix(100, 0), 30*time.Second, []*Recorder{one}, names)

	// Threads: the samples dealt at random to three recorders.
	recs := []*Recorder{NewRecorder(DefaultExpected(), true, 2), NewRecorder(DefaultExpected(), true, 2), NewRecorder(DefaultExpected(), true, 2)}
	var steps []*Step
	for k, r := range recs {
		var mine []Sample
		for i := range samples {
			if i%3 == k {
				mine = append(mine, samples[i])
			}
		}
		// Indexes of metric names belong to a recorder: this one learns them in another order.
		r.Metric([]byte("app"))
		for i := range mine {
			x := *mine[i].X // the samples' own Extras are shared by every share's copy
			x.Timing = renamed(x.Timing, one, r)
			mine[i].X = &x
		}
		rng.Shuffle(len(mine), func(i, j int) { mine[i], mine[j] = mine[j], mine[i] })
		r.Add(mine)
		// Hosts: each share as its own step whose window starts k seconds later (at k s on
		// its own clock), so the same requests sit k seconds earlier in it.
		hr := NewRecorder(DefaultExpected(), true, 2)
		hr.Window(time.Duration(k)*time.Second, 0)
		theirs := slices.Clone(mine)
		for i := range theirs {
			x := *theirs[i].X
			x.Timing = renamed(x.Timing, r, hr)
			theirs[i].X = &x
		}
		hr.Add(theirs)
		st := Combine(time.Unix(100+int64(k), 0), 30*time.Second, []*Recorder{hr}, names)
		b, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		var back Step
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		steps = append(steps, &back)
	}
	threads := Combine(time.Unix(100, 0), 30*time.Second, recs, names)
	hosts := steps[2]
	hosts.Merge(steps[0])
	hosts.Merge(steps[1])

	for name, got := range map[string]*Step{"three recorders": threads, "three steps merged": hosts} {
		if !reflect.DeepEqual(got.Exemplars, want.Exemplars) {
			t.Errorf("%s: exemplars differ from one recorder's:\ngot  %+v\nwant %+v", name, got.Exemplars.Slowest, want.Exemplars.Slowest)
		}
		if !reflect.DeepEqual(got.ServerTiming, want.ServerTiming) {
			t.Errorf("%s: server timing differs from one recorder's:\ngot  %+v\nwant %+v", name, got.ServerTiming, want.ServerTiming)
		}
	}

	// The slowest list is exactly the 10 largest latencies, slowest first.
	lats := make([]int64, len(samples))
	for i, s := range samples {
		lats[i] = s.Latency
	}
	slices.Sort(lats)
	slices.Reverse(lats)
	x := want.Exemplars
	if len(x.Slowest) != DefaultSlowest {
		t.Fatalf("kept %d slowest, want %d", len(x.Slowest), DefaultSlowest)
	}
	for i, e := range x.Slowest {
		if int64(e.Latency) != lats[i] {
			t.Errorf("slowest[%d] latency = %v, want %v", i, e.Latency, time.Duration(lats[i]))
		}
		if e.Trace.IsZero() || e.Endpoint == "" || e.Uncorrected != e.Latency/2 {
			t.Errorf("slowest[%d] = %+v: want its trace id, endpoint name and uncorrected latency", i, e)
		}
	}
	// Each band's exemplar lies near its percentile (within a quarter octave bucket or two).
	if len(x.Bands) != len(Bands) {
		t.Fatalf("bands = %+v, want %d", x.Bands, len(Bands))
	}
	for _, b := range x.Bands {
		p := want.Latency.Percentile(b.Percentile)
		if d := bucket(b.Exemplar.Latency) - bucket(Duration(p)); d < -2 || d > 2 {
			t.Errorf("band p%v exemplar latency %v is far from the percentile %v", b.Percentile, b.Exemplar.Latency, p)
		}
	}
}

// renamed moves a response's Server-Timing from recorder a's metric indexes to b's.
func renamed(t Timings, a, b *Recorder) Timings {
	names := *a.metrics.names.Load()
	for i, m := range t.Metric {
		if m != 0 {
			t.Metric[i] = b.Metric([]byte(names[m-1]))
		}
	}
	return t
}

func TestKeepSlowestN(t *testing.T) {
	r := NewRecorder(DefaultExpected(), false, 0)
	r.KeepSlowest(3)
	r.Window(time.Second, 0)
	var batch []Sample
	for i := range 100 {
		batch = append(batch, Sample{Done: int64(time.Second) + int64(i)*int64(time.Millisecond), Latency: int64(i%37) * int64(time.Millisecond), Class: Response, Status: 200, Conn: int32(i)})
	}
	batch = append(batch, Sample{Done: int64(2 * time.Second), Latency: int64(time.Hour), Class: TimeoutError})
	r.Add(batch)
	s := Combine(time.Unix(0, 0), time.Second, []*Recorder{r}, nil)
	var got []time.Duration
	for _, e := range s.Exemplars.Slowest {
		got = append(got, e.Latency.Duration())
	}
	// Latencies 36 ms occur at i = 36 and 73, 35 ms at 35 and 72: ties break by key, so either
	// 35 ms request may come third; a timeout is not a response and is never listed.
	if want := []time.Duration{36 * time.Millisecond, 36 * time.Millisecond, 35 * time.Millisecond}; !reflect.DeepEqual(got, want) {
		t.Fatalf("slowest = %v, want %v", got, want)
	}
	if e := s.Exemplars.Slowest[0]; e.Start.Duration() != time.Duration(e.Conn)*time.Millisecond-e.Latency.Duration() {
		t.Errorf("slowest start = %v for conn %d latency %v: want done minus latency, from the window's start", e.Start, e.Conn, e.Latency)
	}
}

func TestServerTimingPercentiles(t *testing.T) {
	r := NewRecorder(DefaultExpected(), false, 0)
	db := r.Metric([]byte("db"))
	var batch []Sample
	for i := range 1000 {
		s := Sample{Done: int64(i), Latency: int64(40 * time.Millisecond), Class: Response, Status: 200, X: &Extra{}}
		d := 2.0
		if i%100 == 0 {
			d = 32 // 1% at 32 ms: p99 is still 2 ms, p99.9 32
		}
		s.X.Timing.Add(db, d/2)
		s.X.Timing.Add(db, d/2) // sent twice: summed
		if i%10 == 0 {
			s.X.Timing.Bad()
		}
		batch = append(batch, s)
	}
	batch = append(batch, Sample{Done: 5, Latency: 1, Class: Response, Status: 200}) // none
	r.Add(batch)
	st := Combine(time.Unix(0, 0), time.Second, []*Recorder{r}, nil).ServerTiming
	m := st.Metric("db")
	if m == nil || m.Responses != 1000 || st.Responses != 1000 || st.Malformed != 100 {
		t.Fatalf("server timing = %+v, want db in 1000 responses and 100 malformed", st)
	}
	near := func(got, want float64) bool { return got >= want && got <= want*1.001 } // the histogram's precision
	if !near(m.Summary.P50, 2) || !near(m.Summary.P99, 2) || !near(m.Summary.Max, 32) {
		t.Errorf("db p50/p99/max = %v/%v/%v ms, want 2/2/32", m.Summary.P50, m.Summary.P99, m.Summary.Max)
	}
	if u := st.Unaccounted.Percentile(50); !near(u.Seconds()*1000, 38) {
		t.Errorf("unaccounted p50 = %v, want 40 ms - 2 ms", u)
	}
}

func TestMetricNamesLimit(t *testing.T) {
	r := NewRecorder(DefaultExpected(), false, 0)
	for i := range maxMetricNames {
		if got := r.Metric([]byte{'m', byte('a' + i/26), byte('a' + i%26)}); int(got) != i+1 {
			t.Fatalf("Metric(name %d) = %d, want %d", i, got, i+1)
		}
	}
	if got := r.Metric([]byte("one-too-many")); got != 0 {
		t.Errorf("Metric past the limit = %d, want 0", got)
	}
	if got := r.Metric([]byte("maa")); got != 1 {
		t.Errorf("Metric of a known name = %d, want 1", got)
	}
	name := []byte("mab")
	if n := testing.AllocsPerRun(100, func() { r.Metric(name) }); n != 0 {
		t.Errorf("Metric of a known name allocated %v times, want 0", n)
	}
	var tm Timings
	for i := range MaxTimings + 2 {
		tm.Add(uint8(i+1), 1)
	}
	tm.Add(0, 1)
	if tm.Dropped != 3 {
		t.Errorf("dropped = %d, want the 2 past MaxTimings and the unnamed one", tm.Dropped)
	}
}

// TestOldStepHasNoExemplars: a step saved before exemplars and Server-Timing existed reads
// with neither, and merging it keeps the other step's.
func TestOldStepHasNoExemplars(t *testing.T) {
	old := `{"label":"c=1","start":"2026-01-01T00:00:00Z","elapsed":"1s","attempts":1,"requests":1,"successes":1,"bytes":10,
		"errors":{},"status":{"200":1},"latency":null,"latency_summary":{},"all_attempts":null,"timeline":[],"thread_rps":{},"threads":1}`
	var s Step
	if err := json.Unmarshal([]byte(old), &s); err != nil {
		t.Fatal(err)
	}
	if s.Exemplars != nil || s.ServerTiming != nil {
		t.Fatalf("old step decoded with exemplars %+v, server timing %+v; want none", s.Exemplars, s.ServerTiming)
	}
	r := NewRecorder(DefaultExpected(), false, 0)
	r.Add([]Sample{{Done: 1, Latency: int64(time.Millisecond), Class: Response, Status: 200}})
	n := Combine(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Second, []*Recorder{r}, nil)
	s.Merge(n)
	if s.Exemplars == nil || len(s.Exemplars.Slowest) != 1 {
		t.Errorf("merged exemplars = %+v, want the new step's one response", s.Exemplars)
	}
}

// TestServerTimingBeyondRange: a dur past the histograms' range (dur=1e308, or more than an
// hour) is not a duration of the response: it counts as malformed, and no percentile shows it
// (it showed as "60.01m"); a name sent twice whose sum passes the range does not wrap.
func TestServerTimingBeyondRange(t *testing.T) {
	r := NewRecorder(DefaultExpected(), false, 0)
	db, app := r.Metric([]byte("db")), r.Metric([]byte("app"))
	s := Sample{Done: 1, Latency: int64(40 * time.Millisecond), Class: Response, Status: 200, X: &Extra{}}
	s.X.Timing.Add(db, 1e308)
	s.X.Timing.Add(app, 2)
	twice := Sample{Done: 2, Latency: int64(40 * time.Millisecond), Class: Response, Status: 200, X: &Extra{}}
	twice.X.Timing.Add(db, 3.5e6) // 58 min, twice: 116 min, past the hour
	twice.X.Timing.Add(db, 3.5e6)
	r.Add([]Sample{s, twice})
	st := Combine(time.Unix(0, 0), time.Second, []*Recorder{r}, nil).ServerTiming
	if st == nil || st.Malformed != 2 || st.Metric("db") != nil || st.Metric("app") == nil {
		t.Fatalf("server timing = %+v; want the dur=1e308 and the summed 116 min counted malformed, db never recorded, app kept", st)
	}
}
