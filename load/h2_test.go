package load

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apiperf/apiperf/internal/testenv"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
)

// goH2Server starts Go's net/http server answering HTTP/2: h2 over TLS (tls true) or h2c
// with prior knowledge, counting the requests it served.
func goH2Server(t *testing.T, tls bool, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 2 {
			http.Error(w, "want HTTP/2, got "+r.Proto, http.StatusHTTPVersionNotSupported)
			return
		}
		n.Add(1)
		if h != nil {
			h(w, r)
			return
		}
		io.WriteString(w, "ok")
	}))
	srv.Config.Protocols = new(http.Protocols)
	if tls {
		srv.EnableHTTP2 = true
		srv.Config.Protocols.SetHTTP2(true)
		srv.StartTLS()
	} else {
		srv.Config.Protocols.SetUnencryptedHTTP2(true)
		srv.Config.Protocols.SetHTTP1(true)
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv, &n
}

// runH2 loads url over HTTP/2 with cfg defaults filled in.
func runH2(t testing.TB, url string, cfg Config, sc ...scenario.Scenario) (*measure.Step, error) {
	t.Helper()
	s := scenario.Scenario{URL: url}
	if len(sc) > 0 {
		s = sc[0]
		s.URL = url
	}
	src, err := scenario.NewStatic(s)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := scenario.ParseTarget(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.HTTP2 = true
	cfg.Insecure = true
	if cfg.Threads == 0 {
		cfg.Threads = 2
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = measure.Duration(2 * time.Second)
	}
	if cfg.Connections == 0 {
		cfg.Connections = 4
	}
	return Run(context.Background(), cfg, src, tg, h2TestOpts...)
}

// h2TestOpts are the options runH2 passes to Run (TestH2Paths runs tests on each I/O path).
var h2TestOpts []Option

func mustRunH2(t *testing.T, url string, cfg Config, sc ...scenario.Scenario) *measure.Step {
	t.Helper()
	s, err := runH2(t, url, cfg, sc...)
	if err != nil {
		t.Fatalf("Run(%s, %v) error: %v", url, cfg, err)
	}
	return s
}

func TestH2ExactCountGoServer(t *testing.T) {
	for _, tls := range []bool{false, true} {
		srv, got := goH2Server(t, tls, nil)
		s := mustRunH2(t, srv.URL, Config{Requests: 10000, Connections: 4, Streams: 10})
		if s.Requests != 10000 || s.Successes != 10000 || got.Load() != 10000 {
			t.Errorf("%s -n 10000 -c 4 --streams 10: recorded %d responses (%d successes, errors %v), server counted %d; want 10000 each",
				srv.URL, s.Requests, s.Successes, s.Errors, got.Load())
		}
		want := "h2c"
		if tls {
			want = "h2"
		}
		if s.HTTP2 == nil || s.HTTP2.Protocol != want || s.HTTP2.Streams != 10 {
			t.Errorf("%s: step.HTTP2 = %+v, want protocol %s with 10 streams", srv.URL, s.HTTP2, want)
		}
	}
}

func TestH2BodiesHeadersAndStatus(t *testing.T) {
	srv, _ := goH2Server(t, false, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.Method != "POST" || string(b) != strings.Repeat("x", 100000) || r.Header.Get("X-Test") != "yes" || r.Host == "" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusTeapot)
		io.WriteString(w, strings.Repeat("y", 70000)) // above the default 64 KB window
	})
	sc := scenario.Scenario{Method: "POST", Body: strings.Repeat("x", 100000), Headers: []scenario.Header{{Name: "X-Test", Value: "yes"}}}
	s := mustRunH2(t, srv.URL, Config{Requests: 50, Connections: 2, Streams: 5}, sc)
	if s.Requests != 50 || s.Status[418] != 50 || s.Errors.Status != 50 {
		t.Errorf("POST 100 KB bodies: %d responses, statuses %v, errors %v; want 50 of 418 counted as status errors", s.Requests, s.Status, s.Errors)
	}
	if s.HTTP2.FlowStalls == 0 {
		t.Errorf("100 KB bodies over a 64 KB window: %d flow-control stalls counted, want some", s.HTTP2.FlowStalls)
	}
	if s.Bytes < 50*70000 {
		t.Errorf("bytes read %d, want at least %d", s.Bytes, 50*70000)
	}
}

func TestH2RefusesHTTP1Server(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	_, err := runH2(t, srv.URL, Config{Requests: 10, Connections: 1})
	if err == nil || !strings.Contains(err.Error(), "does not speak HTTP/2") {
		t.Errorf("h2c against an HTTP/1.1-only server: error %v, want one saying it does not speak HTTP/2", err)
	}
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer tlsSrv.Close()
	_, err = runH2(t, tlsSrv.URL, Config{Requests: 10, Connections: 1})
	if err == nil || !strings.Contains(err.Error(), "ALPN") {
		t.Errorf("h2 against a TLS server without h2: error %v, want one about ALPN", err)
	}
}

func TestH2OpenLoop(t *testing.T) {
	srv, got := goH2Server(t, false, nil)
	s := mustRunH2(t, srv.URL, Config{Rate: 2000, Requests: 1000, Connections: 2, Streams: 4})
	if s.Requests != 1000 || got.Load() != 1000 || s.Open == nil || s.Open.Scheduled != 1000 {
		t.Errorf("open loop over HTTP/2, -R 2000 -n 1000: %d responses, server %d, open %+v; want 1000", s.Requests, got.Load(), s.Open)
	}
	if s.Uncorrected == nil || s.Uncorrected.Count() != 1000 {
		t.Errorf("open loop: uncorrected latencies missing")
	}
}

// TestH2OpenLoopStopsAtItsEnd: over HTTP/2 too, an open loop that cannot keep up sends
// nothing after its window (checkStoppedAtWindow).
func TestH2OpenLoopStopsAtItsEnd(t *testing.T) {
	srv, _ := goH2Server(t, false, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(100 * time.Millisecond)
	})
	start := time.Now()
	s := mustRunH2(t, srv.URL, Config{Rate: 400, Duration: measure.Duration(time.Second), Connections: 1, MaxConnections: 2, Streams: 1, Timeout: measure.Duration(time.Second)})
	checkStoppedAtWindow(t, s, time.Since(start), 2)
}

// An open loop that one connection cannot carry opens more, up to --max-connections: a
// handler that takes 1 ms, 3,000 requests a second, one stream per connection (about three
// connections' worth). The server is a process of its own and GOMAXPROCS 1, as the benchmarks
// run, so that the event loop keeps its only P and the pool grows from a goroutine beside it,
// whose timers run only when the loop yields the P (when it did not, the pool stayed at one
// connection). The pool rightly does not grow while the generator is short of CPU: on a
// machine whose other processes want the CPUs, a run that says so is not judged.
func TestH2OpenLoopGrowsPool(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	addr, _ := testenv.ServeInChild(t, "TestH2SlowHelperServer")
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	busy := watchRunnable()
	s := mustRunH2(t, "http://"+addr+"/", Config{Rate: 3000, Duration: measure.Duration(1500 * time.Millisecond), Threads: 1, Connections: 1,
		MaxConnections: 40, Streams: 1, Timeout: measure.Duration(2 * time.Second)})
	others := busy()
	if s.Open == nil || s.Open.Connections < 3 || s.Open.Connections > 40 {
		if others && strings.Contains(strings.Join(s.Warnings, " "), "short of CPU") {
			t.Skipf("not judged: the machine was busy (median runnable tasks over %d CPUs) and the run says the generator was short of CPU: %v", runtime.NumCPU(), s.Warnings)
		}
		t.Fatalf("1 ms handler at -R 3000 from 1 connection, --max-connections 40: open loop %+v; want the pool grown to 3-40 connections", s.Open)
	}
	if s.Errors.Total() != 0 || s.Requests < 1500 {
		t.Errorf("pool growth: %d responses, errors %v; want at least 1,500 and none", s.Requests, s.Errors)
	}
}

// TestH2SlowHelperServer is not a test: the server process of TestH2OpenLoopGrowsPool (h2c
// with prior knowledge, a 1 ms handler).
func TestH2SlowHelperServer(t *testing.T) {
	ln := testenv.ChildListener(t)
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	srv := &http.Server{Protocols: p, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Millisecond)
		io.WriteString(w, "ok")
	})}
	srv.Serve(ln)
}

// watchRunnable samples the machine's runnable tasks (/proc/stat procs_running) every 50 ms
// until the returned function is called, which reports whether their median exceeded the CPUs.
func watchRunnable() func() bool {
	stop := make(chan struct{})
	done := make(chan bool)
	go func() {
		var seen []int
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				slices.Sort(seen)
				done <- len(seen) > 0 && seen[len(seen)/2] > runtime.NumCPU()
				return
			case <-t.C:
				b, _ := os.ReadFile("/proc/stat")
				for _, l := range strings.Split(string(b), "\n") {
					if v, ok := strings.CutPrefix(l, "procs_running "); ok {
						n, _ := strconv.Atoi(v)
						seen = append(seen, n)
					}
				}
			}
		}
	}()
	return func() bool { close(stop); return <-done }
}
