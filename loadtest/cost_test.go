package loadtest

import (
	"crypto/sha256"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/apiperf/apiperf/internal/testenv"
	"github.com/apiperf/apiperf/procfs"
)

// costly is a handler with a known cost: allocs heap objects (one slice of pointers and
// allocs-1 slices of 64 bytes) and rounds of SHA-256 over a 1 kB block per request.
type costly struct {
	allocs, rounds int
	sleep          time.Duration // slept before the work (the handler blocks, as on a database)
	mu             sync.Mutex
	sink           [][]byte // keeps the allocations on the heap
}

var costlyBody = []byte("done")

func (c *costly) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if c.sleep > 0 {
		time.Sleep(c.sleep)
	}
	keep := make([][]byte, 0, c.allocs)
	for range c.allocs - 1 {
		keep = append(keep, make([]byte, 64))
	}
	var block [1024]byte
	for range c.rounds {
		sum := sha256.Sum256(block[:])
		copy(block[:], sum[:])
	}
	c.mu.Lock()
	c.sink = keep
	c.mu.Unlock()
	w.Write(costlyBody)
}

// discard is a ResponseWriter that costs nothing, to measure a handler alone.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}

// alone is the handler's cost measured without a server: allocations by testing.AllocsPerRun,
// CPU by timing calls on one goroutine.
func alone(h http.Handler) (allocs float64, cpu time.Duration) {
	w := &discard{h: http.Header{}}
	r, _ := http.NewRequest("GET", "http://127.0.0.1/", nil)
	allocs = testing.AllocsPerRun(200, func() { h.ServeHTTP(w, r) })
	const n = 2000
	c0, _ := procfs.SelfCPU()
	for range n {
		h.ServeHTTP(w, r)
	}
	c1, _ := procfs.SelfCPU()
	return allocs, (c1 - c0) / n
}

func TestMeasureCostAllocs(t *testing.T) {
	h := &costly{allocs: 50, rounds: 20}
	want, _ := alone(h)
	res, err := Run(t.Context(), Handler(h), MeasureCost(), Connections(1), Requests(4000))
	if err != nil {
		t.Fatal(err)
	}
	c := res.Handler
	if c == nil {
		t.Fatal("MeasureCost: no handler cost in the result")
	}
	t.Logf("handler alone: %.2f allocs/op; under load: %s (process %s, baseline %s)", want, c.Handler, c.Process, c.Baseline)
	// Within 8%: net/http's own allocations per request vary by about one from run to run
	// (13.0 to 14.7 measured for an empty handler), which the baseline cannot take out
	// exactly (measured: 49.8 to 50.6 allocs/req for 50).
	if d := c.Handler.Allocs - want; d > 0.08*want || d < -0.08*want {
		t.Errorf("handler allocs/req %.2f, testing.AllocsPerRun %.2f: want within 8%%", c.Handler.Allocs, want)
	}
	// 49 slices of 64 B and one of 50 (50*24 B rounded to the 1280 B size class).
	if wantB := 49*64 + 1280.0; c.Handler.Bytes < 0.92*wantB || c.Handler.Bytes > 1.08*wantB {
		t.Errorf("handler B/req %.0f, want within 8%% of %.0f", c.Handler.Bytes, wantB)
	}
	if c.Process.CPU <= 0 || c.Baseline.CPU <= 0 {
		t.Errorf("process CPU/req %v, baseline %v: want both measured (CPU against the handler alone: TestTimingMeasureCostCPU)", c.Process.CPU, c.Baseline.CPU)
	}
}

// TestTimingMeasureCostCPU compares the handler's CPU per request under load with the
// handler timed alone (issue 37 asks for 15%), for a handler that only computes and for one
// that first blocks (sleeps) while other connections' requests run. A blocking handler's
// thread is charged its hand-over each time it blocks (MeasureCost's doc), so there the work
// is the difference from the same handler without it: a sleep alone.
func TestTimingMeasureCostCPU(t *testing.T) {
	testenv.Timing(t)
	h := &costly{allocs: 2, rounds: 200}
	_, want := alone(h)
	cost := func(h http.Handler, conns int) time.Duration {
		res, err := Run(t.Context(), Handler(h), MeasureCost(), Connections(conns), Requests(3000))
		if err != nil {
			t.Fatal(err)
		}
		if !res.Handler.CPUTimed {
			t.Fatal("the handler's calls were not timed on their threads")
		}
		t.Logf("handler alone %v CPU/op; under load: %s (process %s, baseline %s)", want, res.Handler.Handler, res.Handler.Process, res.Handler.Baseline)
		return res.Handler.Handler.CPU
	}
	sleeping := &costly{allocs: 2, sleep: time.Millisecond}
	blocking := &costly{allocs: 2, rounds: 200, sleep: time.Millisecond}
	// Medians of three loads. Before the handler's calls were timed on their threads (the
	// process's CPU minus the baseline's), single loads came 9% to 102% over the handler
	// timed alone on a quiet machine and 17% to 70% on a CI machine with 41% steal: the
	// generator's and the server's CPU per request vary from load to load.
	var computing, blocked []time.Duration
	for range 3 {
		computing = append(computing, cost(h, 1))
		blocked = append(blocked, cost(blocking, 4)-cost(sleeping, 4))
	}
	slices.Sort(computing)
	slices.Sort(blocked)
	for _, c := range []struct {
		name string
		got  []time.Duration
	}{{"computing", computing}, {"blocking 1ms first, less a 1ms sleep alone", blocked}} {
		if d := float64(c.got[1] - want); d > 0.15*float64(want) || d < -0.15*float64(want) {
			t.Errorf("%s: handler CPU/req median %v of %v, timed alone %v: want within 15%%", c.name, c.got[1], c.got, want)
		}
	}
}

// TestTimingAssertAA runs one SLO test ten times on an unchanged handler (it must pass every
// time) and once on the same handler made slower (it must fail). The budget leaves room for a
// busy machine's scheduling: with p99<=20ms over a 1 ms handler, runs 8 and 9 of 10 failed at
// p99 27.7 and 37.4 ms beside a `make test` and three compiling jobs (load 9); the slower
// handler is slower than the budget by itself, so it fails on any machine.
func TestTimingAssertAA(t *testing.T) {
	testenv.Timing(t)
	work := func(extra time.Duration) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(time.Millisecond + extra)
		})
	}
	const objective = "p99<=150ms,errors<=0.1%"
	for i := range 10 {
		rec := &recordingTB{TB: t}
		Assert(rec, objective, Handler(work(0)), Connections(4), Duration(300*time.Millisecond))
		if len(rec.errors) > 0 {
			t.Errorf("A/A run %d of 10 failed: %s", i+1, rec.errors[0])
		}
	}
	rec := &recordingTB{TB: t}
	Assert(rec, objective, Handler(work(200*time.Millisecond)), Connections(4), Duration(time.Second))
	if len(rec.errors) != 1 {
		t.Fatalf("a handler 200ms slower against %s: %d failures, want 1", objective, len(rec.errors))
	}
	t.Logf("the slower handler's failure:\n%s", rec.errors[0])
}
