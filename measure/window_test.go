package measure

import (
	"math"
	"testing"
	"time"
)

const ms = int64(time.Millisecond)

// resp is a complete 200 response ending at done (ms since the step's start).
func resp(done, lat int64) Sample {
	return Sample{Done: done * ms, Latency: lat * ms, Bytes: 100, Status: 200, Class: Response}
}

// The measured window: warmup samples are not recorded, samples after the window's end are
// recorded and counted as drained, and the rate counts only what ended inside.
func TestRecorderWindow(t *testing.T) {
	cases := []struct {
		name     string
		from, to time.Duration
		samples  []Sample
		// want
		attempts, requests, inWindow int64
		drained                      Drained
		timeline                     []int64 // requests per second of the window
	}{
		{
			name: "no window: everything counts", samples: []Sample{resp(10, 1), resp(1500, 1)},
			attempts: 2, requests: 2, inWindow: 2, timeline: []int64{1, 1},
		},
		{
			name: "warmup: samples before from are dropped, the timeline starts at from",
			from: time.Second, samples: []Sample{resp(500, 1), resp(999, 1), resp(1000, 1), resp(1200, 1), resp(2100, 1)},
			attempts: 3, requests: 3, inWindow: 3, timeline: []int64{2, 1},
		},
		{
			name: "drain: samples after to are recorded but not in the window",
			to:   time.Second, samples: []Sample{resp(100, 1), resp(1000, 1), resp(1001, 900), {Done: 1500 * ms, Latency: 1400 * ms, Class: TimeoutError}},
			attempts: 4, requests: 3, inWindow: 2, drained: Drained{Attempts: 2, Requests: 1, Bytes: 100},
			timeline: []int64{1, 2}, // the timeline is by completion: 100 ms, then 1000 and 1001 ms
		},
		{
			name: "warmup and drain together",
			from: time.Second, to: 3 * time.Second, samples: []Sample{resp(10, 1), resp(1500, 1), resp(2999, 1), resp(3001, 1)},
			attempts: 3, requests: 3, inWindow: 2, drained: Drained{Attempts: 1, Requests: 1, Bytes: 100},
			timeline: []int64{1, 1, 1},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := NewRecorder(DefaultExpected(), false, 0)
			r.Window(c.from, c.to)
			r.Add(c.samples)
			win := c.to - c.from
			if c.to == 0 {
				win = 2 * time.Second
			}
			s := Combine(time.Unix(0, 0), win, []*Recorder{r}, nil)
			if s.Attempts != c.attempts || s.Requests != c.requests || s.InWindow() != c.inWindow {
				t.Errorf("attempts/requests/in window = %d/%d/%d, want %d/%d/%d", s.Attempts, s.Requests, s.InWindow(), c.attempts, c.requests, c.inWindow)
			}
			if s.Drained != c.drained {
				t.Errorf("drained = %+v, want %+v", s.Drained, c.drained)
			}
			if s.Latency.Count() != c.requests {
				t.Errorf("histogram has %d samples, want every recorded response (%d), drained ones included", s.Latency.Count(), c.requests)
			}
			var tl []int64
			for _, sec := range s.Timeline {
				tl = append(tl, sec.Requests)
			}
			if !equalInts(tl, c.timeline) {
				t.Errorf("timeline requests %v, want %v", tl, c.timeline)
			}
			if want := float64(c.inWindow) / win.Seconds(); math.Abs(s.QPS()-want) > 1e-9 {
				t.Errorf("QPS() = %v, want in-window responses / window = %v", s.QPS(), want)
			}
		})
	}
}

// Window can close the window early (an interruption): later samples are drained.
func TestRecorderWindowClosedEarly(t *testing.T) {
	r := NewRecorder(DefaultExpected(), false, 0)
	r.Window(0, 10*time.Second)
	r.Add([]Sample{resp(100, 1)})
	r.Window(0, 200*time.Millisecond)
	r.Add([]Sample{resp(150, 1), resp(300, 1)})
	s := Combine(time.Unix(0, 0), 200*time.Millisecond, []*Recorder{r}, nil)
	if s.InWindow() != 2 || s.Drained.Requests != 1 {
		t.Errorf("in window %d, drained %+v; want 2 and 1", s.InWindow(), s.Drained)
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The open loop keeps the send lag (corrected - uncorrected) of every response.
func TestRecorderSendLag(t *testing.T) {
	r := NewRecorder(DefaultExpected(), true, 0)
	r.Add([]Sample{
		{Done: 10 * ms, Latency: 3 * ms, Uncorrected: 2 * ms, Status: 200, Class: Response},
		{Done: 20 * ms, Latency: 5 * ms, Uncorrected: 5 * ms, Status: 200, Class: Response},
		{Done: 30 * ms, Latency: 9 * ms, Uncorrected: 1 * ms, Status: 200, Class: Response},
	})
	s := Combine(time.Unix(0, 0), time.Second, []*Recorder{r}, nil)
	if s.SendLag == nil || s.SendLag.Count() != 3 {
		t.Fatalf("SendLag = %v, want 3 samples", s.SendLag)
	}
	if got := s.SendLag.Max(); got < 7900*time.Microsecond || got > 8100*time.Microsecond {
		t.Errorf("max send lag %v, want 8ms (9ms corrected - 1ms uncorrected)", got)
	}
	closed := Combine(time.Unix(0, 0), time.Second, []*Recorder{NewRecorder(DefaultExpected(), false, 0)}, nil)
	if closed.SendLag != nil || closed.Uncorrected != nil {
		t.Errorf("closed loop has send lag %v, uncorrected %v; want neither", closed.SendLag, closed.Uncorrected)
	}
}

func TestStepRates(t *testing.T) {
	cases := []struct {
		name                                string
		s                                   Step
		qps, attempts, bytes, success, clsc float64
	}{
		{"nothing measured: zeros, no division by zero", Step{}, 0, 0, 0, 0, 0},
		{"plain", Step{Elapsed: Duration(2 * time.Second), Attempts: 10, Requests: 8, Successes: 6, Bytes: 800,
			Errors: Errors{Timeout: 2, Status: 2}}, 4, 5, 400, 60, 75},
		{"drained responses are not in the rates", Step{Elapsed: Duration(time.Second), Attempts: 10, Requests: 10, Successes: 10, Bytes: 1000,
			Drained: Drained{Attempts: 4, Requests: 4, Bytes: 400}}, 6, 6, 600, 100, 100},
	}
	for _, c := range cases {
		s := c.s
		got := []float64{s.QPS(), s.AttemptRate(), s.ByteRate(), s.SuccessRate(), s.ClassicSuccessRate()}
		want := []float64{c.qps, c.attempts, c.bytes, c.success, c.clsc}
		for i := range got {
			if math.Abs(got[i]-want[i]) > 1e-9 {
				t.Errorf("%s: QPS, AttemptRate, ByteRate, SuccessRate, ClassicSuccessRate = %v, want %v", c.name, got, want)
				break
			}
		}
	}
}

func TestErrorsAndClasses(t *testing.T) {
	e := Errors{Connect: 1, Read: 2, Write: 3, Timeout: 4, Status: 5, Protocol: 6}
	if e.Socket() != 10 || e.Total() != 21 {
		t.Errorf("Socket %d, Total %d; want 10 (wrk's four classes) and 21", e.Socket(), e.Total())
	}
	if got, want := e.String(), "connect 1, read 2, write 3, timeout 4, status 5, protocol 6"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got := (Errors{}).String(); got != "" {
		t.Errorf("no errors: String() = %q, want empty", got)
	}
	e.Add(Errors{Read: 1, Protocol: 1})
	if e.Read != 3 || e.Protocol != 7 {
		t.Errorf("after Add: %+v", e)
	}
	for c, want := range map[Class]string{Response: "response", TimeoutError: "timeout", ProtocolError: "protocol", Class(42): "class(42)"} {
		if got := c.String(); got != want {
			t.Errorf("Class(%d).String() = %q, want %q", c, got, want)
		}
	}
}

func TestDurationJSON(t *testing.T) {
	cases := []struct {
		in   string
		want time.Duration
		err  bool
	}{
		{`"1.5s"`, 1500 * time.Millisecond, false}, // a Go duration string
		{`"250ms"`, 250 * time.Millisecond, false},
		{`2000000`, 2 * time.Millisecond, false}, // nanoseconds, as older files may hold
		{`"soon"`, 0, true},
		{`true`, 0, true},
	}
	for _, c := range cases {
		var d Duration
		err := d.UnmarshalJSON([]byte(c.in))
		if (err != nil) != c.err || (!c.err && d.Duration() != c.want) {
			t.Errorf("UnmarshalJSON(%s) = %v, %v; want %v (error %v)", c.in, d, err, c.want, c.err)
		}
	}
	b, _ := Duration(90 * time.Second).MarshalJSON()
	if string(b) != `"1m30s"` {
		t.Errorf("MarshalJSON(90s) = %s, want \"1m30s\"", b)
	}
}

func TestRateStats(t *testing.T) {
	cases := []struct {
		name string
		xs   []float64
		want RateStats
	}{
		{"none", nil, RateStats{}},
		{"one sample: no spread", []float64{5}, RateStats{Mean: 5, Max: 5, WithinStdev: 100}},
		// mean 2.5, sample stdev 1.29: 2 and 3 are within one stdev, 1 and 4 are not.
		{"four", []float64{1, 2, 3, 4}, RateStats{Mean: 2.5, Stdev: math.Sqrt(5.0 / 3), Max: 4, WithinStdev: 50}},
	}
	for _, c := range cases {
		got := rateStats(c.xs)
		if math.Abs(got.Mean-c.want.Mean) > 1e-9 || math.Abs(got.Stdev-c.want.Stdev) > 1e-9 || got.Max != c.want.Max || got.WithinStdev != c.want.WithinStdev {
			t.Errorf("%s: rateStats(%v) = %+v, want %+v", c.name, c.xs, got, c.want)
		}
	}
}

func TestPoolRates(t *testing.T) {
	a := RateStats{Mean: 10, Stdev: 0, Max: 10, WithinStdev: 100}
	b := RateStats{Mean: 20, Stdev: 0, Max: 20, WithinStdev: 0}
	got := poolRates(a, 1, b, 1)
	// Two threads at 10 and 20: mean 15, population stdev 5.
	if got.Mean != 15 || got.Stdev != 5 || got.Max != 20 || got.WithinStdev != 50 {
		t.Errorf("poolRates = %+v, want mean 15, stdev 5, max 20, within 50", got)
	}
	if poolRates(a, 0, b, 2) != b || poolRates(a, 2, b, 0) != a {
		t.Error("pooling with an empty group must return the other one")
	}
}

// Merging two hosts' steps: the window is the union, counts and drains add up, the open-loop
// figures combine (rates add, the worst lag wins), and the timeline is aligned by wall clock.
func TestStepMergeWindowsAndOpenLoop(t *testing.T) {
	t0 := time.Unix(1000, 0)
	a := &Step{Start: t0, Elapsed: Duration(2 * time.Second), Requests: 10, Attempts: 10, Drained: Drained{Attempts: 1, Requests: 1},
		Timeline: []Second{{T: 0, Requests: 5}, {T: 1, Requests: 5}}, Threads: 1,
		Open: &OpenLoop{TargetRate: 100, Scheduled: 10, LateSends: 1, MaxLag: Duration(time.Millisecond), Connections: 2}}
	b := &Step{Start: t0.Add(time.Second), Elapsed: Duration(2 * time.Second), Requests: 4, Attempts: 6, Drained: Drained{Attempts: 2},
		Timeline: []Second{{T: 0, Requests: 2}, {T: 1, Requests: 2}}, Threads: 1,
		Open: &OpenLoop{TargetRate: 50, Scheduled: 6, MaxLag: Duration(3 * time.Millisecond), Connections: 1}}
	a.Merge(b)
	if !a.Start.Equal(t0) || a.Elapsed.Duration() != 3*time.Second {
		t.Errorf("window %v + %v, want the union from %v for 3s", a.Start, a.Elapsed, t0)
	}
	if a.Requests != 14 || a.Attempts != 16 || a.Drained != (Drained{Attempts: 3, Requests: 1}) {
		t.Errorf("requests %d, attempts %d, drained %+v", a.Requests, a.Attempts, a.Drained)
	}
	want := []Second{{T: 0, Requests: 5}, {T: 1, Requests: 7}, {T: 2, Requests: 2}}
	if len(a.Timeline) != len(want) {
		t.Fatalf("timeline %+v, want %+v", a.Timeline, want)
	}
	for i := range want {
		if a.Timeline[i].T != want[i].T || a.Timeline[i].Requests != want[i].Requests {
			t.Errorf("timeline %+v, want %+v", a.Timeline, want)
			break
		}
	}
	o := a.Open
	if o.TargetRate != 150 || o.Scheduled != 16 || o.LateSends != 1 || o.MaxLag.Duration() != 3*time.Millisecond || o.Connections != 3 {
		t.Errorf("open loop merged to %+v", o)
	}
}

func TestSummarizeAndFinish(t *testing.T) {
	if got := Summarize(nil); got != (Summary{}) {
		t.Errorf("Summarize(nil) = %+v, want zero", got)
	}
	h := NewHistogram()
	for i := 1; i <= 100; i++ {
		h.Record(time.Duration(i) * time.Millisecond)
	}
	s := Summarize(h)
	if s.Count != 100 || math.Abs(s.P50-50) > 0.1 || math.Abs(s.P99-99) > 0.2 || math.Abs(s.Max-100) > 0.2 || math.Abs(s.Mean-50.5) > 0.1 {
		t.Errorf("Summarize(1..100ms) = %+v", s)
	}
	st := &Step{Latency: h, Uncorrected: h.Clone()}
	st.Finish()
	if st.LatencySummary.Count != 100 || st.UncorrectedSummary == nil || st.UncorrectedSummary.Count != 100 {
		t.Errorf("Finish left summaries %+v / %+v", st.LatencySummary, st.UncorrectedSummary)
	}
}

func TestGeneratorAndConnectMean(t *testing.T) {
	g := &Generator{CPU: Duration(3 * time.Second), Wall: Duration(2 * time.Second)}
	if g.CPUCores() != 1.5 || (*Generator)(nil).CPUCores() != 0 {
		t.Errorf("CPUCores = %v (nil: %v), want 1.5 and 0", g.CPUCores(), (*Generator)(nil).CPUCores())
	}
	m := mergeGenerator(g, &Generator{CPU: Duration(time.Second), Wall: Duration(4 * time.Second), SchedSlowPct: 7})
	if m.CPU.Duration() != 4*time.Second || m.Wall.Duration() != 4*time.Second || m.SchedSlowPct != 7 {
		t.Errorf("mergeGenerator = %+v", m)
	}
	if mergeGenerator(nil, g) != g || mergeGenerator(g, nil) != g {
		t.Error("merging with nil must keep the other")
	}
	s := &Step{Connects: 4, ConnectTime: Duration(2 * time.Millisecond)}
	if s.ConnectMean() != 500*time.Microsecond || (&Step{}).ConnectMean() != 0 {
		t.Errorf("ConnectMean = %v, want 500us (and 0 with no connects)", s.ConnectMean())
	}
}

func TestHTTP2MergeAndString(t *testing.T) {
	var h *HTTP2
	if h.String() != "HTTP/1.1" {
		t.Errorf("nil String() = %q", h.String())
	}
	h = h.Merge(&HTTP2{Protocol: "h2c", Streams: 10, MaxConcurrent: 100, GoAways: map[string]int64{"NO_ERROR": 1}})
	h = h.Merge(&HTTP2{Protocol: "h2c", Streams: 10, MaxConcurrent: 50, Retried: 3, Resets: map[string]int64{"REFUSED_STREAM": 2}})
	h = h.Merge(nil)
	want := "HTTP/2 (h2c), 10 streams per connection (server allows 50: honoured); GOAWAY NO_ERROR 1; 3 retried (not processed by the server); RST_STREAM by server REFUSED_STREAM 2"
	if got := h.String(); got != want {
		t.Errorf("String() = %q\nwant        %q", got, want)
	}
}

// Duration's decoder never panics and what it accepts encodes back to the same duration.
func FuzzDurationJSON(f *testing.F) {
	for _, s := range []string{`"1.5s"`, `12`, `"-3m"`, `"x"`, `null`, `"9999999999h"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var d Duration
		if err := d.UnmarshalJSON(b); err != nil {
			return
		}
		enc, err := d.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var back Duration
		if err := back.UnmarshalJSON(enc); err != nil || back != d {
			t.Errorf("%s -> %v -> %s -> %v, %v", b, d, enc, back, err)
		}
	})
}
