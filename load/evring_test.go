//go:build linux

package load

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/apiperf/apiperf/load/internal/uring"
)

// TestRingPathTaken checks that APIPERF_IO=uring really runs the closed loop on io_uring
// where the kernel allows it (the engine tests under eachIO then cover that path), with
// every request counted once.
func TestRingPathTaken(t *testing.T) {
	r, err := uring.New(8, 16)
	if err != nil {
		t.Skipf("io_uring unavailable here (%v): the uring runs of the engine tests ran on epoll", err)
	}
	r.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") }))
	defer srv.Close()
	// One thread waits keeping its P; more threads than GOMAXPROCS wait as the runtime watches.
	for _, threads := range []int{1, runtime.GOMAXPROCS(0) + 1} {
		before := ringRuns.Load()
		s := run(t, ioUring, context.Background(), srv.URL+"/", Config{Requests: 500, Connections: 8, Threads: threads})
		if got := ringRuns.Load() - before; got != int64(threads) {
			t.Errorf("%d threads: %d event loops ran on io_uring, want one per thread", threads, got)
		}
		if s.Attempts != 500 || s.Successes != 500 {
			t.Errorf("%d threads: attempts %d, successes %d (errors %+v); want 500, 500", threads, s.Attempts, s.Successes, s.Errors)
		}
		if len(s.Warnings) != 0 {
			t.Errorf("%d threads: warnings %q, want none", threads, s.Warnings)
		}
	}
}

// TestRingRefusedFallsBack makes io_uring refuse (as ENOSYS, EPERM or
// kernel.io_uring_disabled do): the loops run on epoll, and a run that asked for io_uring
// says so.
func TestRingRefusedFallsBack(t *testing.T) {
	defer func(f func(uint32, uint32) (*uring.Ring, error)) { newRing = f }(newRing)
	newRing = func(uint32, uint32) (*uring.Ring, error) {
		return nil, fmt.Errorf("%w: io_uring_setup: operation not permitted", uring.ErrUnsupported)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") }))
	defer srv.Close()
	before := ringRuns.Load()
	s := run(t, ioUring, context.Background(), srv.URL+"/", Config{Requests: 200, Connections: 4})
	if ringRuns.Load() != before {
		t.Errorf("a loop ran on io_uring though it was refused")
	}
	if s.Attempts != 200 || s.Successes != 200 {
		t.Errorf("attempts %d, successes %d (errors %+v); want 200, 200 on epoll", s.Attempts, s.Successes, s.Errors)
	}
	if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], "operation not permitted; the event loops ran on epoll") {
		t.Errorf("warnings %q, want one saying io_uring was refused and epoll was used", s.Warnings)
	}
}
