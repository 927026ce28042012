package live

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
)

func TestSpark(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want string
	}{
		{nil, ""},                       // nothing yet
		{[]float64{0, 0}, "▁▁"},         // all zero: the floor, no division by zero
		{[]float64{1, 2, 4, 8}, "▁▂▄█"}, // scaled to the largest
		{[]float64{5, 5, 5}, "███"},     // flat at the maximum
		{[]float64{-1, 8}, "▁█"},        // negative values clamp to the floor
	} {
		if got := spark(tc.in); got != tc.want {
			t.Errorf("spark(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func testInterval(idx int64, n int, open bool) *measure.Interval {
	iv := &measure.Interval{Index: idx, Start: measure.Duration(time.Duration(idx) * time.Second), Length: measure.Duration(time.Second),
		Status: map[int]int64{200: int64(n)}, Latency: measure.NewHistogram(), Requests: int64(n), Attempts: int64(n),
		StepStart: time.Unix(1700000000, 0), Connections: 10}
	for i := 0; i < n; i++ {
		iv.Latency.Record(time.Duration(1+i%5) * time.Millisecond)
	}
	if open {
		iv.Uncorrected = iv.Latency.Clone()
		iv.TargetRate, iv.Lag, iv.InFlight = float64(n), measure.Duration(3*time.Millisecond), 7
	}
	return iv
}

// TestRender: the view names the level of a sweep, the ETA, and in open loop the target and lag.
func TestRender(t *testing.T) {
	st := Phase{Label: "rate=100/s", Level: 2, Levels: 5, Load: load.Config{Rate: 100, Duration: measure.Duration(10 * time.Second)}}
	iv := testInterval(3, 100, true)
	out := heading(st, 14*time.Second, eta(st, 4*time.Second, 0, 10*time.Second)) + render(st, iv, iv.Second(), []float64{90, 100}, []float64{5, 5})
	for _, want := range []string{"level 2 of 5", "ETA 36s", "rate=100/s", "req/s    100", "target 100/s, lag 3.00ms", "p50 3.00ms", "in flight 7 of 10 connections"} {
		if !strings.Contains(out, want) {
			t.Errorf("render() = \n%s\nwant it to contain %q", out, want)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if n := len([]rune(line)); n > 80 {
			t.Errorf("line %q is %d columns, want at most 80", line, n)
		}
	}
}

func TestETA(t *testing.T) {
	sec := func(n int) time.Duration { return time.Duration(n) * time.Second }
	d := func(n int) measure.Duration { return measure.Duration(sec(n)) }
	for _, tc := range []struct {
		st             Phase
		in, warm, meas time.Duration
		want           time.Duration
	}{
		{Phase{Load: load.Config{Duration: d(10)}}, sec(4), 0, 0, sec(6)},                                                          // a run: the rest of it
		{Phase{Load: load.Config{Duration: d(10), Warmup: d(5)}}, sec(4), 0, 0, sec(11)},                                           // its warmup is in the run
		{Phase{Level: 2, Levels: 5, Load: load.Config{Duration: d(10)}}, sec(4), sec(2), sec(10), sec(6 + 3*12)},                   // levels left, each warmup + measure
		{Phase{Level: 2, Levels: 5, Warmup: true, Load: load.Config{Duration: d(2)}}, sec(1), sec(2), sec(10), sec(1 + 10 + 3*12)}, // in a warmup: its level's measure follows
		{Phase{Load: load.Config{Requests: 100}}, sec(4), 0, 0, 0},                                                                 // -n: unknown
	} {
		if got := eta(tc.st, tc.in, tc.warm, tc.meas); got != tc.want {
			t.Errorf("eta(%+v, in %v, warm %v, meas %v) = %v, want %v", tc.st, tc.in, tc.warm, tc.meas, got, tc.want)
		}
	}
}

// TestSessionHlogPerLevel: a sweep's session writes one interval log per level, and a level
// measured again (right away or later) appends to its log; warmups are not logged.
func TestSessionHlogPerLevel(t *testing.T) {
	dir := t.TempDir()
	s, err := Start(Config{HlogDir: dir, Kind: "sweep"})
	if err != nil {
		t.Fatal(err)
	}
	feed := func(st Phase, n int) {
		s.Begin(st)
		for i := int64(0); i < 2; i++ {
			s.interval(st, testInterval(i, n, false), i == 0)
		}
	}
	feed(Phase{Label: "c=1", Level: 1, Levels: 2, Warmup: true}, 5)
	feed(Phase{Label: "c=1", Level: 1, Levels: 2}, 10)
	feed(Phase{Label: "c=1", Level: 1, Levels: 2}, 10) // a repetition
	feed(Phase{Label: "c=2", Level: 2, Levels: 2}, 20)
	feed(Phase{Label: "c=1", Level: 1, Levels: 2}, 10) // measured again later: appended
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int{"c=1.hlog": 6, "c=2.hlog": 2} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(string(b), "HISTF"); got != want {
			t.Errorf("%s has %d histograms, want %d:\n%s", name, got, want, b)
		}
	}
}

func loadConfigOpen() load.Config {
	return load.Config{Rate: 10, Connections: 1, Threads: 1, Duration: measure.Duration(time.Second)}
}

// TestSessionOwnsItsLabels: the live page reads the session's labels while the command
// redacts the run document's own in place (report.Header); under -race the two must not
// share a map (a clean-clone make test beside stress-ng saw that race).
func TestSessionOwnsItsLabels(t *testing.T) {
	labels := map[string]string{"team": "payments", "build": "1"}
	s, err := Start(Config{Listen: "127.0.0.1:0", Kind: "run", Target: "http://127.0.0.1:1/", Labels: labels})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 200; i++ {
			labels["build"] = strconv.Itoa(i) // what result.Run.Redact does
		}
	}()
	for i := 0; i < 5; i++ {
		resp, err := http.Get("http://" + s.Addr() + "/live.json")
		if err != nil {
			t.Fatal(err)
		}
		var st liveState
		err = json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		if err != nil || st.Labels["team"] != "payments" || st.Labels["build"] != "1" {
			t.Fatalf("live.json labels %v (%v), want the labels as the session started", st.Labels, err)
		}
	}
	<-done
}
