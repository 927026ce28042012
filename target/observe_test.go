package target

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// hammer sends GETs to url from 2 goroutines until ctx ends or n requests are sent.
func hammer(ctx context.Context, url string, n int) {
	var wg sync.WaitGroup
	c := &http.Client{Timeout: 5 * time.Second}
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < n/2 && ctx.Err() == nil; i++ {
				if resp, err := c.Get(url); err == nil {
					resp.Body.Close()
				}
			}
		}()
	}
	wg.Wait()
}

// fetchProfile gets and parses a pprof profile from url.
func fetchProfile(t *testing.T, url string) *profile.Profile {
	t.Helper()
	c := &http.Client{Timeout: 20 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: status %d", url, resp.StatusCode)
	}
	p, err := profile.Parse(resp.Body)
	if err != nil {
		t.Fatalf("parsing profile from %s: %v", url, err)
	}
	return p
}

// sampled sums value index vi of the samples whose stack contains a function named fn.
func sampled(p *profile.Profile, fn string, vi int) int64 {
	var sum int64
	for _, s := range p.Sample {
	stack:
		for _, loc := range s.Location {
			for _, line := range loc.Line {
				if line.Function != nil && strings.HasSuffix(line.Function.Name, "."+fn) {
					sum += s.Value[vi]
					break stack
				}
			}
		}
	}
	return sum
}

func TestHotAndAllocInProfiles(t *testing.T) {
	if testing.Short() {
		t.Skip("takes a 1 s CPU profile; skipped with -short")
	}
	s := start(t, Config{Pprof: true})

	// The load runs until the profile is in (bounded): on a busy machine the profile's second
	// may start late and this process get few of the CPU's samples, so a profile without the
	// handler is taken again, up to five times, before the test fails.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() { defer close(done); hammer(ctx, s.URL()+"/hot", 1_000_000) }()
	var got int64
	for try := 0; try < 5 && got == 0; try++ {
		got = sampled(fetchProfile(t, s.URL()+"/debug/pprof/profile?seconds=1"), "apiperfHotHandlerSpin", 1)
	}
	cancel()
	<-done
	if got == 0 {
		t.Errorf("CPU profiles while loading /hot (five of 1 s): no samples in apiperfHotHandlerSpin")
	}

	hammer(context.Background(), s.URL()+"/alloc", 400) // ~20 MB allocated in the handler
	heap := fetchProfile(t, s.URL()+"/debug/pprof/allocs?gc=1")
	idx := -1
	for i, st := range heap.SampleType {
		if st.Type == "alloc_space" {
			idx = i
		}
	}
	if idx < 0 {
		t.Fatalf("allocs profile has no alloc_space sample type: %v", heap.SampleType)
	}
	if got := sampled(heap, "apiperfAllocHandlerGarbage", idx); got < 1<<20 {
		t.Errorf("allocs profile after 400 /alloc: %d bytes in apiperfAllocHandlerGarbage, want over 1 MiB", got)
	}
}

func TestMetrics(t *testing.T) {
	s := start(t, Config{Metrics: true})
	code, _, body := get(t, s.URL()+"/metrics")
	if code != 200 {
		t.Fatalf("GET /metrics: status %d", code)
	}
	for _, name := range []string{"process_cpu_seconds_total", "process_resident_memory_bytes",
		"go_goroutines", "go_memstats_heap_inuse_bytes", "go_gc_duration_seconds"} {
		if !bytes.Contains(body, []byte("\n"+name)) {
			t.Errorf("GET /metrics: no %s", name)
		}
	}
	// Without the options, neither endpoint exists.
	plain := start(t, Config{})
	for _, p := range []string{"/metrics", "/debug/pprof/"} {
		if code, _, _ := get(t, plain.URL()+p); code != 404 {
			t.Errorf("GET %s without the option: status %d, want 404", p, code)
		}
	}
}

// The observability endpoints are not held by the stall or the ceiling.
func TestObservabilityNotStalled(t *testing.T) {
	// Held by the 20 s stall or paced at 1 req/s, 10 requests would take 9 s or more; the 5 s
	// bound leaves room for a busy -race run.
	s := start(t, Config{Metrics: true, Stall: 20 * time.Second, StallEvery: 30 * time.Second, MaxRPS: 1})
	begin := time.Now()
	for range 10 {
		get(t, s.URL()+"/metrics")
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("10 GET /metrics during a stall with max-rps 1 took %v, want them unaffected", d)
	}
}
