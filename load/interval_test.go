package load

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apiperf/apiperf/internal/testenv"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
)

// TestIntervalsSumToTotals loads a server that answers some requests with 500 and lets some
// time out, in 100 ms intervals (both HTTP/1.1 I/O paths, open loop, HTTP/2), and checks that the emitted intervals add up exactly to the
// step's totals: counts, errors by class, statuses, bytes and histogram counts.
func TestIntervalsSumToTotals(t *testing.T) {
	eachIO(t, func(t *testing.T, mode ioMode) { testIntervalsSum(t, mode, 0, false) })
	t.Run("open evloop", func(t *testing.T) { testIntervalsSum(t, ioEvloop, 400, false) })
	t.Run("open evloop-netpoll", func(t *testing.T) { testIntervalsSum(t, ioEvloopNetpoll, 400, false) })
	t.Run("open goroutines", func(t *testing.T) { testIntervalsSum(t, ioGoroutines, 400, false) })
	t.Run("h2", func(t *testing.T) { testIntervalsSum(t, ioAuto, 0, true) })
}

func testIntervalsSum(t *testing.T, mode ioMode, rate float64, h2 bool) {
	var n atomic.Int64
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		switch {
		case i == 3 || i%97 == 0: // the 3rd: a timeout even when a starved run sends fewer than 97
			time.Sleep(300 * time.Millisecond) // past the timeout
		case i%7 == 0:
			w.WriteHeader(http.StatusInternalServerError)
		}
		_, _ = w.Write([]byte("ok"))
	})
	var srv *httptest.Server
	if h2 {
		srv, _ = goH2Server(t, false, handler)
	} else {
		srv = httptest.NewServer(handler)
		defer srv.Close()
	}
	src, _ := scenario.NewStatic(scenario.Scenario{URL: srv.URL})
	tg, _ := scenario.ParseTarget(srv.URL)
	cfg := Config{Connections: 4, Threads: 2, Duration: measure.Duration(1200 * time.Millisecond),
		Timeout: measure.Duration(200 * time.Millisecond), Rate: rate, HTTP2: h2}
	if h2 {
		cfg.Streams = 4
	}
	var ivs []*measure.Interval // when they come is TestTimingIntervalsAreLive's
	step, err := Run(context.Background(), cfg, src, tg, withIO(mode), withInterval(100*time.Millisecond),
		WithIntervals(func(iv *measure.Interval) { ivs = append(ivs, iv) }))
	if err != nil {
		t.Fatal(err)
	}
	var sum measure.Interval
	sum.Status = map[int]int64{}
	lat, unc := measure.NewHistogram(), measure.NewHistogram()
	for i, iv := range ivs {
		if iv.Index != int64(i) {
			t.Fatalf("interval %d has index %d, want them in order without gaps", i, iv.Index)
		}
		sum.Attempts += iv.Attempts
		sum.Requests += iv.Requests
		sum.Successes += iv.Successes
		sum.Bytes += iv.Bytes
		sum.Errors.Add(iv.Errors)
		sum.Status = measure.AddStatus(sum.Status, iv.Status)
		lat.Merge(iv.Latency)
		if want := cfg.Connections * max(cfg.Streams, 1); rate == 0 && iv.InFlight != want {
			t.Fatalf("closed-loop interval %d: %d in flight, want %d (connections x streams)", i, iv.InFlight, want)
		}
		if rate > 0 && (iv.InFlight < 0 || iv.InFlight > iv.Connections) {
			t.Fatalf("open-loop interval %d: %d in flight on %d connections", i, iv.InFlight, iv.Connections)
		}
		if rate > 0 {
			if iv.Uncorrected == nil || iv.TargetRate != rate {
				t.Fatalf("open-loop interval %d: uncorrected %v, target rate %v; want a histogram and %v", i, iv.Uncorrected, iv.TargetRate, rate)
			}
			unc.Merge(iv.Uncorrected)
		}
	}
	if len(ivs) < 10 {
		t.Errorf("got %d intervals of 100ms in a 1.2s run, want at least 10", len(ivs))
	}
	if len(step.Timeline) != len(ivs) {
		t.Errorf("timeline has %d entries, %d intervals were emitted", len(step.Timeline), len(ivs))
	}
	if sum.Attempts != step.Attempts || sum.Requests != step.Requests || sum.Successes != step.Successes || sum.Bytes != step.Bytes {
		t.Errorf("intervals sum to attempts/requests/successes/bytes %d/%d/%d/%d, step has %d/%d/%d/%d",
			sum.Attempts, sum.Requests, sum.Successes, sum.Bytes, step.Attempts, step.Requests, step.Successes, step.Bytes)
	}
	if sum.Errors != step.Errors {
		t.Errorf("intervals sum to errors %+v, step has %+v", sum.Errors, step.Errors)
	}
	if step.Errors.Status == 0 || step.Errors.Timeout == 0 {
		t.Errorf("step errors %+v: want status and timeout errors for the test to mean something", step.Errors)
	}
	for code, c := range step.Status {
		if sum.Status[code] != c {
			t.Errorf("status %d: intervals sum to %d, step has %d", code, sum.Status[code], c)
		}
	}
	if !lat.Equal(step.Latency) {
		t.Errorf("merged interval histograms (%d samples) differ from the step's latency (%d)", lat.Count(), step.Latency.Count())
	}
	if rate > 0 && !unc.Equal(step.Uncorrected) {
		t.Errorf("merged uncorrected interval histograms (%d) differ from the step's (%d)", unc.Count(), step.Uncorrected.Count())
	}
}

// TestTimingIntervalsAreLive: with the machine to itself, the first interval comes during the
// run, not with the last ones as it ends (a starved supervisor may emit them all at the end).
func TestTimingIntervalsAreLive(t *testing.T) {
	testenv.Timing(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) }))
	defer srv.Close()
	src, _ := scenario.NewStatic(scenario.Scenario{URL: srv.URL})
	tg, _ := scenario.ParseTarget(srv.URL)
	var at []time.Time
	_, err := Run(context.Background(), Config{Connections: 4, Threads: 2, Duration: measure.Duration(1200 * time.Millisecond),
		Timeout: measure.Duration(200 * time.Millisecond)}, src, tg, withInterval(100*time.Millisecond),
		WithIntervals(func(*measure.Interval) { at = append(at, time.Now()) }))
	if err != nil {
		t.Fatal(err)
	}
	if len(at) == 0 {
		t.Fatal("no intervals")
	}
	if early := time.Since(at[0]); early < 500*time.Millisecond {
		t.Errorf("the first of %d intervals came %v before the 1.2s run ended, want it during the run", len(at), early)
	}
}
