package load

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
	"github.com/apiperf/apiperf/target"
)

// The open loop on every I/O path: the event loops (the default; APIPERF_IO=netpoll makes
// them wait as where epoll_pwait2 is missing) and a goroutine per connection (TLS, scripts
// that watch responses, APIPERF_IO=goroutines).

func TestOpenLoopExactCount(t *testing.T) { openIO(t, testOpenLoopExactCount) }

// testOpenLoopExactCount: -n in open loop sends exactly n requests, each on the schedule,
// spread over 2 threads (each event loop owns every other request of the schedule).
func testOpenLoopExactCount(t *testing.T, mode ioMode) {
	var got atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Add(1)
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	for _, n := range []int64{303, 1} {
		got.Store(0)
		s := run(t, mode, context.Background(), srv.URL, Config{Rate: 2000, Requests: n, Connections: 4})
		if s.Requests != n || got.Load() != n || s.Successes != n || s.Open == nil || s.Open.Scheduled != n {
			t.Errorf("-R 2000 -n %d: recorded %d (%d successes), server saw %d, open %+v; want %d each", n, s.Requests, s.Successes, got.Load(), s.Open, n)
		}
		if s.Uncorrected == nil || s.Uncorrected.Count() != n {
			t.Errorf("-n %d: uncorrected histogram %v, want %d samples", n, s.Uncorrected, n)
		}
	}
}

func TestOpenLoopErrorClasses(t *testing.T) { openIO(t, testOpenLoopErrorClasses) }

// testOpenLoopErrorClasses: every attempt of an open loop is classified, and counted once.
func testOpenLoopErrorClasses(t *testing.T, mode ioMode) {
	srv := startTarget(t, target.Config{})
	cases := []struct {
		name  string
		url   string
		check func(measure.Errors) bool
	}{
		{"nothing listening is a connect error", deadURL(t), func(e measure.Errors) bool { return e.Connect == 12 }},
		{"a response cut short is a read error", srv.URL() + "/knob?abort=1", func(e measure.Errors) bool { return e.Read == 12 }},
		{"no answer in time is a timeout", srv.URL() + "/knob?hang=1", func(e measure.Errors) bool { return e.Timeout == 12 }},
		{"a 500 is a status error", srv.URL() + "/knob?status=500", func(e measure.Errors) bool { return e.Status == 12 && e.Socket() == 0 }},
		{"garbage bytes are a protocol error", srv.URL() + "/knob?garbage=1", func(e measure.Errors) bool { return e.Protocol == 12 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := run(t, mode, context.Background(), c.url, Config{Rate: 100, Requests: 12, Connections: 3, Timeout: measure.Duration(300 * time.Millisecond)})
			if !c.check(s.Errors) || s.Attempts != 12 || s.Successes != 0 {
				t.Errorf("errors = %+v, attempts %d, successes %d; want all 12 attempts in the class", s.Errors, s.Attempts, s.Successes)
			}
		})
	}
}

func TestOpenLoopPoolLimit(t *testing.T) { openIO(t, testOpenLoopPoolLimit) }

// testOpenLoopPoolLimit: a target that answers in 200 ms at 40 req/s needs about 8
// connections; the pool grows from 1 but never past --max-connections.
func testOpenLoopPoolLimit(t *testing.T, mode ioMode) {
	srv := startTarget(t, target.Config{})
	s := run(t, mode, context.Background(), srv.URL()+"/knob?delay=200ms",
		Config{Rate: 40, Duration: measure.Duration(500 * time.Millisecond), Connections: 1, MaxConnections: 3})
	if s.Open == nil || s.Open.Connections > 3 || s.Open.Connections < 2 {
		t.Errorf("open %+v: want the pool grown past 1 and capped at 3 connections", s.Open)
	}
	if s.Errors.Total() != 0 || s.Successes == 0 {
		t.Errorf("errors %+v, successes %d; want none and some", s.Errors, s.Successes)
	}
}

// TestOpenEvloopIdleClose: a server that closes idle keep-alive connections (here after
// 5 ms, between requests 50 ms apart) costs no error: the event loop sees the close on a
// free connection and connects again for the next request.
func TestOpenEvloopIdleClose(t *testing.T) { evloopIO(t, testOpenEvloopIdleClose) }

func testOpenEvloopIdleClose(t *testing.T, mode ioMode) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	srv.Config.IdleTimeout = 5 * time.Millisecond
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	s := run(t, mode, context.Background(), srv.URL, Config{Rate: 20, Requests: 8, Connections: 2, Threads: 1})
	if s.Successes != 8 || s.Errors.Total() != 0 {
		t.Errorf("successes %d, errors %+v; want 8 and none", s.Successes, s.Errors)
	}
	if conns.Load() < 5 {
		t.Errorf("the server saw %d connections, want most requests on a new one (it closed each after 5ms idle)", conns.Load())
	}
}

// TestOpenEvloopAllocs: the open loop's event loops allocate nothing per request (the run's
// setup and its intervals aside): 10x the requests cost about the same allocations.
func TestOpenEvloopAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	evloopIO(t, testOpenEvloopAllocs)
}

func testOpenEvloopAllocs(t *testing.T, mode ioMode) {
	addr, _ := cannedServer(t, nginxResponse)
	checkNoAllocs(t, mode, "http://"+addr+"/healthz", Config{Rate: 20000, Connections: 20, MaxConnections: 20, Threads: 1}, nil)
}

// checkNoAllocs runs cfg with 300 and 3000 requests (after a warm-up) and fails when the
// second costs more allocations than the run's setup and intervals explain; check looks at
// each step.
func checkNoAllocs(t *testing.T, mode ioMode, url string, cfg Config, check func(*measure.Step)) {
	t.Helper()
	allocs := func(n int64) uint64 {
		c := cfg
		c.Requests = n
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		s := run(t, mode, context.Background(), url, c)
		runtime.ReadMemStats(&m1)
		if s.Requests != n {
			t.Fatalf("-n %d: %d requests (errors %+v)", n, s.Requests, s.Errors)
		}
		if check != nil {
			check(s)
		}
		return m1.Mallocs - m0.Mallocs
	}
	allocs(200) // warm up
	small, large := allocs(300), allocs(3000)
	perReq := (float64(large) - float64(small)) / 2700
	t.Logf("allocations: %d for 300 requests, %d for 3000: %.4f per request", small, large, perReq)
	if perReq > 0.05 {
		t.Errorf("%.3f allocations per request (%d for 300, %d for 3000), want none in steady state", perReq, small, large)
	}
}

// evloopIO runs an event-loop test on io_uring (skipped where the kernel refuses it) and on
// epoll.
func evloopIO(t *testing.T, test func(t *testing.T, mode ioMode)) {
	if !evloopSupported {
		t.Skip("no event loops on this system")
	}
	t.Run("uring", func(t *testing.T) {
		before := ringRuns.Load()
		test(t, ioUring)
		if ringRuns.Load() == before {
			t.Skip("io_uring refused here: the run took epoll")
		}
	})
	t.Run("evloop", func(t *testing.T) { test(t, ioEvloop) })
}

// openIO runs an open-loop test on the event loops (on io_uring, waiting in epoll_pwait2, and
// through the netpoller and a timerfd as where epoll_pwait2 is missing) and on goroutine
// workers.
func openIO(t *testing.T, test func(t *testing.T, mode ioMode)) {
	t.Run("uring", func(t *testing.T) { test(t, ioUring) })
	t.Run("evloop", func(t *testing.T) { test(t, ioEvloop) })
	t.Run("evloop-netpoll", func(t *testing.T) { test(t, ioEvloopNetpoll) })
	t.Run("goroutines", func(t *testing.T) { test(t, ioGoroutines) })
}

func TestIOEnv(t *testing.T) {
	for _, c := range []struct {
		val  string
		want ioMode
		ok   bool
	}{
		{"", ioAuto, true},                 // unset: event loops where they fit
		{"auto", ioAuto, true},             // said explicitly
		{"goroutines", ioGoroutines, true}, // the fallback path, forced
		{"evloop", ioEvloop, true},         // event loops on epoll (the fallback where io_uring is refused)
		{"uring", ioUring, true},           // event loops on io_uring, warning when refused
		{"netpoll", ioEvloopNetpoll, true}, // the open loop's fallback wait, forced
		{"iouring", ioAuto, false},         // unknown: an error before any traffic
	} {
		t.Setenv(IOEnv, c.val)
		got, err := ioFromEnv()
		if got != c.want || (err == nil) != c.ok {
			t.Errorf("%s=%q: ioFromEnv() = %v, %v; want %v, ok %v", IOEnv, c.val, got, err, c.want, c.ok)
		}
	}
	t.Setenv(IOEnv, "iouring")
	src, _ := scenario.NewStatic(scenario.Scenario{URL: "http://127.0.0.1:1/"})
	tg, _ := scenario.ParseTarget("http://127.0.0.1:1/")
	if _, err := Run(context.Background(), Config{Connections: 1, Threads: 1, Requests: 1, Timeout: measure.Duration(time.Second)}, src, tg); err == nil {
		t.Errorf("Run with %s=iouring: no error, want one before any traffic", IOEnv)
	}
}

// TestOpenEvloopSleepsThroughArrivals: at 100 req/s a loop sleeps the 10 ms between its sends
// through the responses' arrivals and reads them when it wakes; their latency is still when
// their last byte arrived (the kernel's receive timestamp), not when the loop read them.
func TestOpenEvloopSleepsThroughArrivals(t *testing.T) {
	evloopIO(t, testOpenEvloopSleepsThroughArrivals)
}

func testOpenEvloopSleepsThroughArrivals(t *testing.T, mode ioMode) {
	addr, _ := cannedServer(t, nginxResponse)
	s := run(t, mode, context.Background(), "http://"+addr+"/healthz", Config{Rate: 100, Requests: 60, Connections: 4, Threads: 1})
	if s.Successes != 60 || s.Uncorrected == nil {
		t.Fatalf("successes %d (errors %+v), uncorrected %v; want 60", s.Successes, s.Errors, s.Uncorrected)
	}
	if p50 := s.Uncorrected.Percentile(50); p50 > 3*time.Millisecond {
		t.Errorf("uncorrected p50 = %v, want well under the 10 ms between sends (a canned loopback response)", p50)
	}
}
