//go:build linux

package load

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
)

// TestServedHereClosedLoop runs the closed loop against a target served by the test's own
// process with as many engine threads as GOMAXPROCS (the default): on io_uring, on epoll, on
// goroutines and over HTTP/2, the engine must wait so that the target's goroutines get a P.
// When the io_uring loops kept their Ps in raw waits, the target ran only when the runtime
// preempted a loop (3000 requests over 10 connections took 2.5 to 3.3 s at GOMAXPROCS=2,
// against 0.18 s on one thread, which leaves a P free). Each run is compared with the same
// run on one thread: the bound (4 times, plus half a second for a busy machine) is far
// above a fair run and far below the broken one.
func TestServedHereClosedLoop(t *testing.T) {
	procs := max(runtime.GOMAXPROCS(0), 2)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	h1 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }))
	defer h1.Close()
	h2, _ := goH2Server(t, false, nil)
	const n = 3000
	for _, c := range []struct {
		name string
		mode ioMode
		h2   bool
	}{{"io_uring", ioUring, false}, {"epoll", ioEvloop, false}, {"goroutines", ioGoroutines, false}, {"http2", ioAuto, true}} {
		timed := func(threads int) time.Duration {
			cfg := Config{Requests: n, Connections: 10, Threads: threads}
			start := time.Now()
			var s *measure.Step
			if c.h2 {
				s = mustRunH2(t, h2.URL+"/", cfg)
			} else {
				s = run(t, c.mode, context.Background(), h1.URL+"/", cfg)
			}
			d := time.Since(start)
			if s.Attempts != n || s.Successes != n {
				t.Fatalf("%s, %d threads: attempts %d, successes %d; want %d", c.name, threads, s.Attempts, s.Successes, n)
			}
			return d
		}
		one := timed(1)
		all := timed(procs)
		t.Logf("%s: %d requests on 1 thread %v, on %d threads %v", c.name, n, one, procs, all)
		if all > 4*one+time.Second/2 {
			t.Errorf("%s: %d requests on %d threads took %v, on 1 thread %v: the engine keeps the target's goroutines off the Ps", c.name, n, procs, all, one)
		}
	}
}
