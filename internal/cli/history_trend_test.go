package cli

import (
	"context"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/store"
	"github.com/apiperf/apiperf/sweep"
)

// TestTrendRunsProtocolAndCapacity reads runs back from a real history database: an HTTP/2 run
// and an HTTP/1.1 run of one URL are two targets (a protocol change is not a regression), and a
// capacity search is one point, its answer, not one series per probed rate.
func TestTrendRunsProtocolAndCapacity(t *testing.T) {
	db := filepath.Join(t.TempDir(), "history.db")
	h, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	const url = "http://127.0.0.1:8080/api"
	h1 := historyRun(url, t0, nil, time.Millisecond)
	h2 := historyRun(url, t0.Add(time.Hour), nil, 3*time.Millisecond)
	h2.Load.HTTP2 = true
	capRun := &result.Run{Version: result.Version, Tool: "apiperf test", Kind: result.KindCapacity, Host: "h",
		Command: []string{"apiperf", "capacity", url}, Scenario: h1.Scenario, Start: t0.Add(2 * time.Hour), End: t0.Add(3 * time.Hour),
		Capacity: &sweep.Capacity{Answer: 150}}
	capRun.Load = h1.Load
	capRun.Load.Rate = 100
	for i, rate := range []float64{100, 200, 200, 150} { // 200 failed twice; 150 is the answer
		hist := measure.NewHistogram()
		hist.RecordN(time.Duration(rate)*time.Microsecond, 100)
		capRun.Steps = append(capRun.Steps, &measure.Step{Label: sweep.Label(true, rate), Rep: i, Elapsed: measure.Duration(time.Second),
			Attempts: 100, Requests: 100, Successes: 100, Latency: hist, AllAttempts: hist,
			Open: &measure.OpenLoop{TargetRate: rate, Scheduled: 100}})
	}
	trs := trendRuns(recordAll(t, h, h1, h2, capRun), trendMetrics["p99"], "")
	if len(trs) != 3 {
		t.Fatalf("trendRuns: %d points, want 3: %+v", len(trs), trs)
	}
	if trs[0].Target == trs[1].Target {
		t.Errorf("HTTP/1.1 and HTTP/2 runs share the target %q; want two lines", trs[0].Target)
	}
	if want := "run GET " + url + " (HTTP/2)"; trs[1].Target != want {
		t.Errorf("HTTP/2 run's target = %q, want %q", trs[1].Target, want)
	}
	if v, ok := trs[2].Values["answer"]; len(trs[2].Values) != 1 || !ok || v < 0.14 || v > 0.16 {
		t.Errorf("capacity run's values = %v, want one point, answer, p99 about 0.15 ms (the 150/s probe)", trs[2].Values)
	}
}

// `history trend --metric first_p99` charts a streamed run's p99 time to first message, read
// back from a real history database: 120 ms at c=10; a run without streams has no value.
func TestTrendFirstMessage(t *testing.T) {
	db := filepath.Join(t.TempDir(), "history.db")
	h, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	const url = "http://127.0.0.1:8080/events"
	streamed, plain := historyRun(url, t0, nil, time.Millisecond), historyRun(url, t0.Add(time.Hour), nil, time.Millisecond)
	for _, s := range streamed.Steps {
		first := measure.NewHistogram()
		first.RecordN(120*time.Millisecond, 100)
		s.Streams = &measure.Streams{Kind: "sse", Streams: 100, Messages: 2000, First: first, Gap: measure.NewHistogram()}
	}
	trs := trendRuns(recordAll(t, h, streamed, plain), trendMetrics["first_p99"], "c=10")
	if len(trs) != 2 {
		t.Fatalf("trendRuns: %d points, want 2: %+v", len(trs), trs)
	}
	if v := trs[0].Values["c=10"]; v < 119 || v > 121.5 {
		t.Errorf("streamed run's first_p99 = %v ms, want about 120", v)
	}
	if v := trs[1].Values["c=10"]; !math.IsNaN(v) {
		t.Errorf("run without streams: first_p99 = %v, want none (NaN)", v)
	}
}

// recordAll records runs in the history h, closes it and returns what it lists.
func recordAll(t *testing.T, h *store.DB, runs ...*result.Run) []store.Entry {
	t.Helper()
	defer h.Close()
	for _, r := range runs {
		if _, _, err := h.Record(context.Background(), r, ""); err != nil {
			t.Fatal(err)
		}
	}
	list, err := h.List(context.Background(), store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return list
}
