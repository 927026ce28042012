package result

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// step makes a measured step of n responses of lat each, started at start.
func step(label string, start time.Time, n int64, lat time.Duration) *measure.Step {
	h := measure.NewHistogram()
	h.RecordN(lat, n)
	s := &measure.Step{Label: label, Start: start, Elapsed: measure.Duration(time.Second), Attempts: n, Requests: n, Successes: n,
		Bytes: 100 * n, Status: map[int]int64{200: n}, Latency: h, AllAttempts: h.Clone(), Threads: 1,
		Timeline: []measure.Second{{T: 0, Requests: n}}}
	s.Finish()
	return s
}

func newRun(host string, steps ...*measure.Step) *Run {
	return &Run{Version: Version, Tool: "apiperf test", Kind: KindRun, Host: host, Start: t0, End: t0.Add(time.Second),
		Command:  []string{"apiperf", "run", "-H", "Authorization: Bearer sekrit", "http://127.0.0.1:1/?token=abc"},
		Scenario: scenario.Scenario{URL: "http://127.0.0.1:1/?token=abc", Headers: []scenario.Header{{Name: "Authorization", Value: "Bearer sekrit"}}},
		Load:     load.Config{Connections: 4, Threads: 2, Duration: measure.Duration(time.Second), Timeout: measure.Duration(time.Second)},
		Steps:    steps}
}

// A run survives Save and Load (file or run directory) with every number intact, and the
// saved file holds no secret.
func TestSaveLoadRoundTrip(t *testing.T) {
	s := step("c=4", t0, 1000, 2*time.Millisecond)
	s.Drained = measure.Drained{Attempts: 3, Requests: 3, Bytes: 300}
	s.Open = &measure.OpenLoop{TargetRate: 1000, Scheduled: 1000, LateSends: 2, MaxLag: measure.Duration(3 * time.Millisecond), Connections: 4}
	s.SendLag = measure.NewHistogram()
	s.SendLag.Record(20 * time.Microsecond)
	r := newRun("gen-a", s)
	r.Labels = map[string]string{"branch": "main"}
	r.Warnings = []string{"a warning"}
	dir := filepath.Join(t.TempDir(), "run-1")
	if err := r.Save(filepath.Join(dir, "run.json")); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "run.json"))
	for _, secret := range []string{"sekrit", "token=abc"} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("run.json holds the secret %q", secret)
		}
	}
	for _, path := range []string{dir, filepath.Join(dir, "run.json")} {
		back, err := Load(path)
		if err != nil {
			t.Fatalf("Load(%s): %v", path, err)
		}
		b := back.Last()
		if b.Requests != 1000 || b.Drained != s.Drained || !b.Latency.Equal(s.Latency) || b.QPS() != s.QPS() ||
			b.Open == nil || *b.Open != *s.Open || b.SendLag == nil || b.SendLag.Count() != 1 {
			t.Errorf("Load(%s): step %+v differs from the saved one", path, b)
		}
		if back.Labels["branch"] != "main" || len(back.AllWarnings()) != 1 || back.Load != r.Load {
			t.Errorf("Load(%s): labels %v, warnings %v, load %+v", path, back.Labels, back.AllWarnings(), back.Load)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "run.json.tmp")); !os.IsNotExist(err) {
		t.Errorf("Save left its temporary file behind: %v", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	good, err := newRun("h", step("c=1", t0, 1, time.Millisecond)).Encode()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, doc, want string
	}{
		{"not JSON: the line of the syntax error", "{\n\"version\": 2,\n  oops\n}", "run.json:3:"},
		{"a field of the wrong type, with its line", "{\n\"version\": \"two\"\n}", "run.json:2: field version"},
		{"no version: not ours", `{"kind": "run", "steps": []}`, "not an apiperf run document"},
		{"from the future", `{"version": 99, "steps": []}`, "newer than this apiperf reads"},
		{"a step without its histogram", strings.Replace(string(good), `"latency": "HIST`, `"latency_gone": "HIST`, 1), "has no latency histogram"},
	}
	for _, c := range cases {
		_, err := Decode("run.json", []byte(c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Decode = %v, want an error with %q", c.name, err, c.want)
		}
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("Load of a missing file: no error")
	}
}

// Runs of several generators merge exactly: steps by label and repetition, counts add, the
// load adds up, each host's warnings keep its name, and mismatched runs are refused with
// every reason at once.
func TestMergeGenerators(t *testing.T) {
	a := newRun("gen-a", step("c=4", t0, 100, time.Millisecond), step("c=8", t0.Add(2*time.Second), 50, 2*time.Millisecond))
	b := newRun("gen-b", step("c=4", t0.Add(100*time.Millisecond), 300, 3*time.Millisecond))
	b.Start = t0.Add(100 * time.Millisecond)
	b.Warnings = []string{"slow"}
	m, err := Merge([]*Run{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Steps) != 2 || m.Steps[0].Requests != 400 || m.Steps[1].Requests != 50 {
		t.Fatalf("merged steps %d: %+v", len(m.Steps), m.Steps)
	}
	if m.Steps[0].Latency.Count() != 400 || a.Steps[0].Latency.Count() != 100 {
		t.Errorf("merged histogram %d samples (want 400); the input's now %d (want 100, untouched)", m.Steps[0].Latency.Count(), a.Steps[0].Latency.Count())
	}
	if m.Load.Connections != 8 || m.Load.Threads != 4 || m.Host != "[gen-a gen-b]" || !m.Start.Equal(t0) {
		t.Errorf("merged load %+v, host %q, start %v", m.Load, m.Host, m.Start)
	}
	if len(m.Warnings) != 1 || m.Warnings[0] != "gen-b: slow" {
		t.Errorf("warnings %q, want the host named", m.Warnings)
	}

	c := newRun("gen-c", step("c=4", t0, 1, time.Millisecond))
	c.Kind, c.Scenario.URL, c.Load.Rate = KindSweep, "http://127.0.0.1:2/", 100
	_, err = Merge([]*Run{a, c})
	for _, want := range []string{"is a sweep", "loads GET http://127.0.0.1:2/", "open/closed loop"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Merge of mismatched runs = %v, want it to say %q", err, want)
		}
	}
	if _, err := Merge(nil); err == nil {
		t.Error("Merge(nil): no error")
	}
}

func TestAllWarningsAndLast(t *testing.T) {
	r := newRun("h")
	if r.Last() != nil {
		t.Error("Last() of a run without steps is not nil")
	}
	s1, s2 := step("c=1", t0, 1, time.Millisecond), step("c=2", t0, 1, time.Millisecond)
	s1.Warnings = []string{"few samples"}
	r.Steps = []*measure.Step{s1, s2}
	r.Warnings = []string{"run-wide"}
	if got := r.AllWarnings(); len(got) != 2 || got[0] != "run-wide" || got[1] != "c=1: few samples" {
		t.Errorf("AllWarnings() = %q", got)
	}
	if r.Last() != s2 {
		t.Error("Last() is not the last step")
	}
	if lv := r.Levels(); lv == nil || len(lv.Levels) != 2 {
		t.Errorf("Levels() of a run without a sweep = %+v, want its two steps as levels", lv)
	}
}

// Redact is idempotent and reaches the native run.
func TestRedactRunIdempotent(t *testing.T) {
	r := newRun("h", step("c=1", t0, 1, time.Millisecond))
	r.Native = newRun("h", step("c=1", t0, 1, time.Millisecond))
	r.Redact()
	once, _ := json.Marshal(r)
	r.Redact()
	twice, _ := json.Marshal(r)
	if string(once) != string(twice) {
		t.Error("Redact is not idempotent")
	}
	for _, secret := range []string{"sekrit", "token=abc"} {
		if strings.Contains(string(once), secret) {
			t.Errorf("redacted run still holds %q", secret)
		}
	}
	var nilRun *Run
	nilRun.Redact() // must not panic
}

// Decode never panics on any input, and what it accepts encodes again and decodes to the
// same steps.
func FuzzDecode(f *testing.F) {
	good, _ := newRun("h", step("c=1", t0, 3, time.Millisecond)).Encode()
	f.Add(good)
	f.Add([]byte(`{"version": 1, "steps": []}`))
	f.Add([]byte(`{"version": 2, "steps": [null]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Decode("f.json", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.json:") {
				t.Errorf("error %q does not name the file and line", err)
			}
			return
		}
		b, err := r.Encode()
		if err != nil {
			return // a value JSON cannot hold (say, a histogram that does not encode)
		}
		back, err := Decode("again.json", b)
		if err != nil {
			t.Fatalf("a decoded run does not decode after Encode: %v", err)
		}
		if len(back.Steps) != len(r.Steps) {
			t.Errorf("%d steps after a round trip, want %d", len(back.Steps), len(r.Steps))
		}
	})
}

// timedStep is step with exemplars and Server-Timing recorded by a recorder: n responses,
// the slowest (lat*10) every 100th, each with a trace id starting with tag.
func timedStep(label string, start time.Time, n int, lat time.Duration, tag byte) *measure.Step {
	rec := measure.NewRecorder(measure.DefaultExpected(), false, 0)
	db := rec.Metric([]byte("db"))
	var batch []measure.Sample
	for i := range n {
		s := measure.Sample{Done: int64(i) * int64(time.Millisecond), Latency: int64(lat), Class: measure.Response, Status: 200, Conn: int32(i % 3), X: &measure.Extra{}}
		if i%100 == 0 {
			s.Latency *= 10
		}
		s.X.Trace[0], s.X.Trace[14], s.X.Trace[15] = tag, byte(i>>8), byte(i)
		s.X.Timing.Add(db, float64(s.Latency)/1e6/2)
		batch = append(batch, s)
	}
	rec.Add(batch)
	st := measure.Combine(start, time.Second, []*measure.Recorder{rec}, nil)
	st.Label = label
	return st
}

// The exemplars and Server-Timing of a run survive Save and Load, and merging runs keeps
// the slowest of all of them with their trace ids, leaving the inputs untouched.
func TestExemplarsSaveLoadMerge(t *testing.T) {
	a := newRun("gen-a", timedStep("c=4", t0, 1000, time.Millisecond, 0xa))
	b := newRun("gen-b", timedStep("c=4", t0.Add(time.Second), 500, 2*time.Millisecond, 0xb))
	b.Start = t0.Add(time.Second)
	b.Redact() // as a's Save does
	path := filepath.Join(t.TempDir(), "a.json")
	if err := a.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := back.Last().Exemplars, a.Last().Exemplars; !jsonEqual(got, want) {
		t.Errorf("exemplars after Save and Load:\n%+v\nwant\n%+v", got, want)
	}
	if got := back.Last().ServerTiming.Metric("db"); got == nil || got.Responses != 1000 || !got.Histogram.Equal(a.Last().ServerTiming.Metric("db").Histogram) {
		t.Errorf("Server-Timing db after Save and Load = %+v", got)
	}
	before := a.Last().Exemplars.Clone()
	m, err := Merge([]*Run{back, b})
	if err != nil {
		t.Fatal(err)
	}
	x := m.Last().Exemplars
	// b's 5 slow requests (20 ms) come first, then a's 10 ms ones: 10 kept.
	if len(x.Slowest) != 10 || x.Slowest[0].Latency.Duration() != 20*time.Millisecond || x.Slowest[5].Latency.Duration() != 10*time.Millisecond {
		t.Fatalf("merged slowest = %+v", x.Slowest)
	}
	if x.Slowest[0].Trace[0] != 0xb || x.Slowest[5].Trace[0] != 0xa {
		t.Errorf("merged slowest trace ids %s, %s: want gen-b's then gen-a's", x.Slowest[0].Trace, x.Slowest[5].Trace)
	}
	// gen-b's window started 1 s after the merged one: its requests move 1 s later.
	if x.Slowest[0].Start.Duration() < time.Second {
		t.Errorf("gen-b's slowest starts at %v in the merged window, want after 1s", x.Slowest[0].Start)
	}
	if db := m.Last().ServerTiming.Metric("db"); db == nil || db.Responses != 1500 {
		t.Errorf("merged Server-Timing db = %+v, want 1500 responses", db)
	}
	if !jsonEqual(a.Last().Exemplars, before) {
		t.Error("Merge changed its input's exemplars")
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
