//go:build linux

package profcap

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runtimeMetrics serves this process's real runtime figures under the names
// client_golang's Go and process collectors use. (client_golang itself
// cannot be built here: its module needs one the proxy refuses to serve.)
func runtimeMetrics(w http.ResponseWriter, _ *http.Request) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	cpu := float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	fmt.Fprintf(w, "# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n")
	fmt.Fprintf(w, "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total %g\n", cpu)
	if statm, err := os.ReadFile("/proc/self/statm"); err == nil {
		if f := strings.Fields(string(statm)); len(f) > 1 {
			if pages, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				fmt.Fprintf(w, "# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes %d\n", pages*int64(os.Getpagesize()))
			}
		}
	}
	fmt.Fprintf(w, "# TYPE go_goroutines gauge\ngo_goroutines %d\n", runtime.NumGoroutine())
	fmt.Fprintf(w, "# TYPE go_memstats_heap_inuse_bytes gauge\ngo_memstats_heap_inuse_bytes %d\n", ms.HeapInuse)
	fmt.Fprintf(w, "# TYPE go_gc_duration_seconds summary\ngo_gc_duration_seconds{quantile=\"0\"} 0\n")
	fmt.Fprintf(w, "go_gc_duration_seconds_sum %g\ngo_gc_duration_seconds_count %d\n", float64(ms.PauseTotalNs)/1e9, ms.NumGC)
}

// countingServer serves h and sends on the returned channel after each scrape.
func countingServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, <-chan struct{}) {
	t.Helper()
	served := make(chan struct{}, 1000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h(w, r)
		select {
		case served <- struct{}{}:
		default:
		}
	}))
	t.Cleanup(srv.Close)
	return srv, served
}

func waitScrapes(t *testing.T, served <-chan struct{}, n int) {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for range n {
		select {
		case <-served:
		case <-timeout:
			t.Fatalf("fewer than %d scrapes within 5s", n)
		}
	}
}

func TestScraperSeesRuntimeChange(t *testing.T) {
	srv, served := countingServer(t, runtimeMetrics)
	s := &Scraper{URL: srv.URL + "/metrics", Interval: 50 * time.Millisecond, Timeout: 5 * time.Second, Client: srv.Client()}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	type result struct {
		series Series
		warns  []string
	}
	done := make(chan result, 1)
	go func() {
		series, warns := s.Run(ctx)
		done <- result{series, warns}
	}()

	waitScrapes(t, served, 3)
	park := make(chan struct{})
	defer close(park)
	for range 300 {
		go func() { <-park }()
	}
	spinFor(150 * time.Millisecond)
	runtime.GC()
	for len(served) > 0 { // scrapes served before the GC do not count
		<-served
	}
	waitScrapes(t, served, 3)
	cancel()
	res := <-done

	if len(res.warns) > 0 {
		t.Errorf("Run warnings = %q, want none", res.warns)
	}
	pts := res.series.Points
	if len(pts) < 6 || res.series.Failed != 0 {
		t.Fatalf("Run got %d points, %d failed scrapes; want >= 6 points, none failed", len(pts), res.series.Failed)
	}
	if pts[0].CPUCores != nil || pts[0].GCs != nil {
		t.Errorf("first point has rates %v/%v, want none (nothing to compare with)", pts[0].CPUCores, pts[0].GCs)
	}
	for i := 1; i < len(pts); i++ {
		if pts[i].Offset <= pts[i-1].Offset {
			t.Errorf("point %d offset %v not after %v", i, pts[i].Offset, pts[i-1].Offset)
		}
	}
	sum := res.series.Summarize(0, pts[len(pts)-1].Offset)
	g0 := *pts[0].Goroutines
	if sum.Goroutines == nil || sum.Goroutines.Max < g0+250 {
		t.Errorf("Summarize goroutines = %+v, want max >= %v (start %v + 300 parked)", sum.Goroutines, g0+250, g0)
	}
	// Rates over 50ms intervals are noisy on a busy machine; the mean is not.
	if sum.CPUCores == nil || sum.CPUCores.Max <= 0 || sum.CPUCores.Mean > float64(runtime.NumCPU())+0.5 {
		t.Errorf("Summarize cpu = %+v, want a max > 0 and a mean <= %d cores", sum.CPUCores, runtime.NumCPU())
	}
	if sum.GCs < 1 || sum.GCPauseMeanSeconds == nil || *sum.GCPauseMeanSeconds < 0 {
		t.Errorf("Summarize GCs = %v (mean pause %v), want >= 1 after runtime.GC", sum.GCs, sum.GCPauseMeanSeconds)
	}
	if sum.RSSBytes == nil || sum.RSSBytes.Mean < 1<<20 || sum.HeapInuseBytes == nil || sum.HeapInuseBytes.Max <= 0 {
		t.Errorf("Summarize memory = rss %+v heap %+v, want both present and plausible", sum.RSSBytes, sum.HeapInuseBytes)
	}
}

// spinFor burns CPU on this goroutine for d.
func spinFor(d time.Duration) {
	x := 1
	for end := time.Now().Add(d); time.Now().Before(end); {
		for range 10_000 {
			x = x*31 + 7
		}
	}
	_ = x
}

func TestScraperMissingMetricsWarnOnce(t *testing.T) {
	srv, served := countingServer(t, func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "go_goroutines %d\n", runtime.NumGoroutine())
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan []string, 1)
	var series Series
	go func() {
		var warns []string
		series, warns = (&Scraper{URL: srv.URL, Interval: 20 * time.Millisecond, Timeout: 5 * time.Second}).Run(ctx)
		done <- warns
	}()
	waitScrapes(t, served, 5) // the last may be cut short by cancel and not count
	cancel()
	warns := <-done
	if len(series.Points) < 4 {
		t.Errorf("Run got %d points, want >= 4", len(series.Points))
	}
	if len(warns) != 5 {
		t.Fatalf("Run warnings = %q, want one per missing metric (5)", warns)
	}
	for _, m := range []string{metricCPU, metricRSS, metricHeapInuse, metricGCSum, metricGCCount} {
		if !strings.Contains(strings.Join(warns, "\n"), "does not expose "+m+"; skipped") {
			t.Errorf("Run warnings %q lack one for %s", warns, m)
		}
	}
	for _, p := range series.Points {
		if p.Goroutines == nil || p.CPUCores != nil || p.RSSBytes != nil {
			t.Errorf("point %+v: want goroutines only", p)
		}
	}
}
