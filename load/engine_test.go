package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apiperf/apiperf/internal/testenv"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
	"github.com/apiperf/apiperf/target"
)

// run loads url with cfg defaults filled in and fails the test on a setup error.
func run(t *testing.T, mode ioMode, ctx context.Context, url string, cfg Config, sc ...scenario.Scenario) *measure.Step {
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
	if cfg.Threads == 0 {
		cfg.Threads = 2
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = measure.Duration(2 * time.Second)
	}
	if cfg.Connections == 0 {
		cfg.Connections = 4
	}
	step, err := Run(ctx, cfg, src, tg, withIO(mode))
	if err != nil {
		t.Fatalf("Run(%s, %v) error: %v", url, cfg, err)
	}
	return step
}

func startTarget(t *testing.T, cfg target.Config) *target.Server {
	t.Helper()
	srv, err := target.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

func TestExactRequestCount(t *testing.T) { eachIO(t, testExactRequestCount) }

func testExactRequestCount(t *testing.T, mode ioMode) {
	var got atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Add(1)
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	for _, c := range []struct{ n, conns int64 }{
		{1003, 10}, // N not divisible by C: hey would send 1000
		{7, 10},    // fewer requests than connections
		{500, 1},   // one connection
	} {
		got.Store(0)
		s := run(t, mode, context.Background(), srv.URL, Config{Requests: c.n, Connections: int(c.conns)})
		if s.Requests != c.n || got.Load() != c.n || s.Successes != c.n {
			t.Errorf("-n %d -c %d: recorded %d requests (%d successes), server saw %d; want %d each", c.n, c.conns, s.Requests, s.Successes, got.Load(), c.n)
		}
		if s.Latency.Count() != c.n {
			t.Errorf("-n %d: histogram has %d samples", c.n, s.Latency.Count())
		}
	}
}

func TestErrorClasses(t *testing.T) { eachIO(t, testErrorClasses) }

func testErrorClasses(t *testing.T, mode ioMode) {
	srv := startTarget(t, target.Config{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/"
	ln.Close() // nothing listens there now
	cases := []struct {
		name  string
		url   string
		check func(measure.Errors) bool
	}{
		{"nothing listening is a connect error", dead, func(e measure.Errors) bool { return e.Connect > 0 && e.Read+e.Timeout+e.Protocol == 0 }},
		{"a response cut short is a read error", srv.URL() + "/knob?abort=1", func(e measure.Errors) bool { return e.Read > 0 && e.Protocol+e.Timeout == 0 }},
		{"no answer in time is a timeout", srv.URL() + "/knob?hang=1", func(e measure.Errors) bool { return e.Timeout > 0 && e.Read+e.Protocol == 0 }},
		{"a 500 is a status error", srv.URL() + "/knob?status=500", func(e measure.Errors) bool { return e.Status > 0 && e.Socket() == 0 }},
		{"garbage bytes are a protocol error", srv.URL() + "/knob?garbage=1", func(e measure.Errors) bool { return e.Protocol > 0 && e.Timeout == 0 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := run(t, mode, context.Background(), c.url, Config{Requests: 12, Connections: 3, Timeout: measure.Duration(300 * time.Millisecond)})
			if !c.check(s.Errors) {
				t.Errorf("errors = %+v", s.Errors)
			}
			if s.Attempts != 12 {
				t.Errorf("attempts = %d, want exactly 12", s.Attempts)
			}
			if s.Successes != 0 {
				t.Errorf("successes = %d, want 0", s.Successes)
			}
		})
	}
}

func TestTimeoutIsRealAndKeepsTheSample(t *testing.T) { eachIO(t, testTimeoutIsRealAndKeepsTheSample) }

func testTimeoutIsRealAndKeepsTheSample(t *testing.T, mode ioMode) {
	srv := startTarget(t, target.Config{})
	timeout := 200 * time.Millisecond
	start := time.Now()
	s := run(t, mode, context.Background(), srv.URL()+"/knob?hang=1", Config{Requests: 4, Connections: 2, Timeout: measure.Duration(timeout)})
	took := time.Since(start)
	if s.Errors.Timeout != 4 {
		t.Fatalf("timeouts = %d, want 4 (errors %+v)", s.Errors.Timeout, s.Errors)
	}
	// Two rounds of two: each abandoned between timeout and timeout+slack, never waiting for the server.
	if took > 2*timeout+4*time.Second { // generous for -race on a busy machine; the server never answers
		t.Errorf("4 hung requests on 2 connections took %v, want about %v: the timer is not real", took, 2*timeout)
	}
	// The histogram keeps 3 significant digits: Min is the lowest value of its bucket, up to
	// 0.1% below the recorded one (200 ms reads back as 199.936 ms).
	if floor := timeout - timeout/1000; s.AllAttempts.Count() != 4 || s.AllAttempts.Min() < floor {
		t.Errorf("all-attempts view has %d samples, min %v; want 4 samples >= %v", s.AllAttempts.Count(), s.AllAttempts.Min(), floor)
	}
	if s.Latency.Count() != 0 {
		t.Errorf("responses view has %d samples, want 0", s.Latency.Count())
	}
}

func TestBodiesAreByteCounted(t *testing.T) { eachIO(t, testBodiesAreByteCounted) }

func testBodiesAreByteCounted(t *testing.T, mode ioMode) {
	srv := startTarget(t, target.Config{})
	for _, c := range []struct {
		name, query string
	}{
		{"content-length", "size=10000"},
		{"chunked", "size=10000&chunked=1"},
		{"larger than a read buffer", "size=200000"},
		{"connection close", "size=1000&close=1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := srv.URL() + "/knob?" + c.query
			resp, err := http.Get(url)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			s := run(t, mode, context.Background(), url, Config{Requests: 20, Connections: 2})
			if s.Successes != 20 {
				t.Fatalf("successes = %d, want 20 (errors %+v)", s.Successes, s.Errors)
			}
			perResp := s.Bytes / 20
			if s.Bytes%20 != 0 || perResp < int64(len(body)) || perResp > int64(len(body))+400 {
				t.Errorf("read %d bytes for 20 responses (%d each); body is %d bytes plus headers", s.Bytes, perResp, len(body))
			}
		})
	}
}

func TestHeadAndCustomRequest(t *testing.T) { eachIO(t, testHeadAndCustomRequest) }

func testHeadAndCustomRequest(t *testing.T, mode ioMode) {
	var seen atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		seen.Store(fmt.Sprintf("%s %s %s %s", r.Method, r.Header.Get("X-Test"), r.Header.Get("Content-Length"), b))
		w.Header().Set("Content-Length", "5")
		if r.Method != "HEAD" {
			io.WriteString(w, "hello")
		}
	}))
	defer srv.Close()
	s := run(t, mode, context.Background(), srv.URL, Config{Requests: 10}, scenario.Scenario{Method: "POST", Headers: []scenario.Header{{Name: "X-Test", Value: "yes"}}, Body: "abc"})
	if got := seen.Load(); got != "POST yes 3 abc" || s.Successes != 10 {
		t.Errorf("server saw %q with %d successes; want \"POST yes 3 abc\" and 10", got, s.Successes)
	}
	s = run(t, mode, context.Background(), srv.URL, Config{Requests: 10}, scenario.Scenario{Method: "HEAD"})
	if s.Successes != 10 || s.Errors.Total() != 0 {
		t.Errorf("HEAD: successes %d errors %+v; a HEAD response has no body whatever its Content-Length", s.Successes, s.Errors)
	}
}

// Handshakes under -race on a busy machine can take long: the timeout is generous, and a run
// whose every handshake fails need only stop well before its duration.
func TestTLS(t *testing.T) { eachIO(t, testTLS) }

func testTLS(t *testing.T, mode ioMode) {
	const timeout = measure.Duration(10 * time.Second)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "secure") }))
	defer srv.Close()
	s := run(t, mode, context.Background(), srv.URL, Config{Requests: 50, Insecure: true, Timeout: timeout})
	if s.Successes != 50 {
		t.Errorf("with -k: %d successes, errors %+v; want 50", s.Successes, s.Errors)
	}
	s = run(t, mode, context.Background(), srv.URL, Config{Requests: 5, Timeout: timeout})
	if s.Errors.Connect != 5 || s.Successes != 0 {
		t.Errorf("without -k against a self-signed certificate: errors %+v successes %d; want 5 connect errors", s.Errors, s.Successes)
	}
	// Finding 7 of issue 12: the warning names the x509 reason and suggests -k, and a run
	// whose every handshake fails stops after the connect grace.
	addr := strings.TrimPrefix(srv.URL, "https://")
	want := TLSPrefix + addr + " failed: x509: certificate signed by unknown authority (for a test certificate, -k skips verification)"
	if !slices.Contains(s.Warnings, want) {
		t.Errorf("warnings %q; want %q", s.Warnings, want)
	}
	if err := s.Err(); !errors.Is(err, measure.ErrTLS) || err.Error() != want {
		t.Errorf("Err() = %v; want measure.ErrTLS saying %q", err, want)
	}
	start := time.Now()
	s = run(t, mode, context.Background(), srv.URL, Config{Duration: measure.Duration(30 * time.Second), Connections: 2, Timeout: timeout})
	if took := time.Since(start); took > 15*time.Second || !slices.Contains(s.Warnings, want) {
		t.Errorf("a 30s run with every handshake failing took %v, warnings %q; want a stop after the %v grace and %q", took, s.Warnings, DefaultConnectGrace, want)
	}
	// A target that does not speak TLS at all.
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer plain.Close()
	s = run(t, mode, context.Background(), strings.Replace(plain.URL, "http://", "https://", 1), Config{Requests: 3, Timeout: timeout})
	if w := strings.Join(s.Warnings, "\n"); !strings.Contains(w, "does not answer in TLS") {
		t.Errorf("https:// to a plain HTTP server: warnings %q; want the hint that it does not answer in TLS", w)
	}
}

// TestTimingConnectGrace: with the machine to itself, a run whose every handshake fails, or
// whose target refuses every connection, stops within a second of the connect grace.
func TestTimingConnectGrace(t *testing.T) {
	testenv.Timing(t)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	for _, url := range []string{srv.URL, deadURL(t)} {
		start := time.Now()
		run(t, ioAuto, context.Background(), url, Config{Duration: measure.Duration(5 * time.Second), Connections: 2})
		if took := time.Since(start); took > DefaultConnectGrace+time.Second {
			t.Errorf("a 5s run against %s took %v, want a stop after the %v grace", url, took, DefaultConnectGrace)
		}
	}
}

// pipelined sends three requests per write.
type pipelined struct{ raw []byte }

func (p pipelined) Requester(thread, conn int) (scenario.Requester, error) { return p, nil }
func (p pipelined) Endpoints() []string                                    { return nil }
func (p pipelined) Request() ([]byte, int, int, bool)                      { return p.raw, 3, 0, false }

func TestPipelining(t *testing.T) { eachIO(t, testPipelining) }

func testPipelining(t *testing.T, mode ioMode) {
	var got atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Add(1)
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	tg, _ := scenario.ParseTarget(srv.URL)
	one := scenario.Format("GET", "/", tg.HostHdr, nil, nil)
	src := pipelined{raw: []byte(strings.Repeat(string(one), 3))}
	s, err := Run(context.Background(), Config{Connections: 2, Threads: 1, Requests: 30, Timeout: measure.Duration(2 * time.Second)}, src, tg, withIO(mode))
	if err != nil {
		t.Fatal(err)
	}
	if s.Requests != 30 || got.Load() != 30 {
		t.Errorf("pipelined batches of 3: recorded %d, server saw %d; want 30", s.Requests, got.Load())
	}
}

// slowRequests takes 20 ms to make every request, as a wrk script's request() that signs
// or encrypts each body does.
type slowRequests struct{ raw []byte }

func (p slowRequests) Requester(thread, conn int) (scenario.Requester, error) { return p, nil }
func (p slowRequests) Endpoints() []string                                    { return nil }
func (p slowRequests) Request() ([]byte, int, int, bool) {
	time.Sleep(20 * time.Millisecond)
	return p.raw, 1, 0, false
}

// The time a request takes to make is the generator's, not the target's: latency starts
// when the request is sent, on both I/O paths.
func TestLatencyExcludesMakingTheRequest(t *testing.T) {
	eachIO(t, testLatencyExcludesMakingTheRequest)
}

func testLatencyExcludesMakingTheRequest(t *testing.T, mode ioMode) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	tg, _ := scenario.ParseTarget(srv.URL)
	src := slowRequests{raw: scenario.Format("GET", "/", tg.HostHdr, nil, nil)}
	s, err := Run(context.Background(), Config{Connections: 1, Threads: 1, Requests: 20, Timeout: measure.Duration(2 * time.Second)}, src, tg, withIO(mode))
	if err != nil {
		t.Fatal(err)
	}
	// A loopback answer takes well under a millisecond; 10 ms leaves room for a busy machine,
	// and is half of what making each request took.
	if p50 := s.Latency.Percentile(50); s.Requests != 20 || p50 >= 10*time.Millisecond {
		t.Errorf("20 requests taking 20 ms each to make, to a loopback server: %d recorded, median latency %v; want 20 under 10ms", s.Requests, p50)
	}
}

func TestCancelStopsAtOnceAndKeepsResults(t *testing.T) {
	eachIO(t, testCancelStopsAtOnceAndKeepsResults)
}

func testCancelStopsAtOnceAndKeepsResults(t *testing.T, mode ioMode) {
	srv := startTarget(t, target.Config{})
	url := srv.URL() + "/knob?delay=20ms"
	src, err := scenario.NewStatic(scenario.Scenario{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	tg, err := scenario.ParseTarget(url)
	if err != nil {
		t.Fatal(err)
	}
	// Ctrl-C once responses are measured (the first progress report that counts some), not
	// at a fixed time, which a busy machine can reach before the first response.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stopped atomic.Int64 // when, in Unix nanoseconds
	cancelOnResponses := WithProgress(func(p Progress) {
		if p.Requests > 0 && stopped.CompareAndSwap(0, time.Now().UnixNano()) {
			cancel()
		}
	})
	cfg := Config{Duration: measure.Duration(30 * time.Second), Connections: 4, Threads: 2, Timeout: measure.Duration(2 * time.Second)}
	s, err := Run(ctx, cfg, src, tg, withIO(mode), cancelOnResponses)
	if err != nil {
		t.Fatal(err)
	}
	// At once: no more than the requests in flight (20 ms each, the timeout at most), with
	// room for a busy machine, far from the 30s the run would otherwise take.
	if took := time.Since(time.Unix(0, stopped.Load())); stopped.Load() == 0 || took > 8*time.Second {
		t.Errorf("returned %v after the cancel (0: never cancelled), want at once", took)
	}
	if s.Requests == 0 || s.Errors.Total() != 0 {
		t.Errorf("after cancel: %d requests, errors %+v; want the measured requests and no errors from the interruption", s.Requests, s.Errors)
	}
	if len(s.Warnings) == 0 || !strings.Contains(s.Warnings[0], "interrupted") {
		t.Errorf("warnings = %q, want an interruption warning", s.Warnings)
	}
}

func TestLargeRequestBody(t *testing.T) { eachIO(t, testLargeRequestBody) }

// testLargeRequestBody sends a body larger than a socket's send buffer, so writes must wait
// for room (the event loop's EPOLLOUT path).
func testLargeRequestBody(t *testing.T, mode ioMode) {
	const size = 8 << 20
	var got atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		got.Add(n)
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	body := strings.Repeat("x", size)
	s := run(t, mode, context.Background(), srv.URL, Config{Requests: 3, Connections: 1, Timeout: measure.Duration(20 * time.Second)},
		scenario.Scenario{Method: "POST", Body: body})
	if s.Successes != 3 || got.Load() != 3*size {
		t.Errorf("3 POSTs of %d bytes: %d successes (errors %+v), server read %d bytes; want 3 and %d", size, s.Successes, s.Errors, got.Load(), 3*size)
	}
}

func TestAddresses(t *testing.T) { eachIO(t, testAddresses) }

// testAddresses loads the target by IPv6 loopback and by a name that must be resolved.
func testAddresses(t *testing.T, mode ioMode) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	for _, url := range []string{"http://localhost:" + port + "/"} {
		if s := run(t, mode, context.Background(), url, Config{Requests: 20}); s.Successes != 20 {
			t.Errorf("%s: %d successes, errors %+v; want 20", url, s.Successes, s.Errors)
		}
	}
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback here: %v", err)
	}
	srv6 := httptest.NewUnstartedServer(srv.Config.Handler)
	srv6.Listener.Close()
	srv6.Listener = ln
	srv6.Start()
	defer srv6.Close()
	if s := run(t, mode, context.Background(), srv6.URL+"/", Config{Requests: 20}); s.Successes != 20 {
		t.Errorf("%s: %d successes, errors %+v; want 20", srv6.URL, s.Successes, s.Errors)
	}
}

// eachIO runs a test on each way HTTP/1.1 over plain TCP does its I/O: event loops on epoll
// (closed and open loop), goroutine workers, and event loops doing the closed loop's I/O on
// io_uring (the default where the kernel allows it; the open loop then runs as by default).
func eachIO(t *testing.T, test func(t *testing.T, mode ioMode)) {
	t.Run("evloop", func(t *testing.T) { test(t, ioEvloop) })
	t.Run("goroutines", func(t *testing.T) { test(t, ioGoroutines) })
	t.Run("uring", func(t *testing.T) { test(t, ioUring) })
}

func TestConfigValidate(t *testing.T) {
	bad := Config{Connections: 0, Threads: 0, Timeout: 0}
	err := bad.Validate()
	if err == nil {
		t.Fatal("Validate() of a zero config = nil")
	}
	for _, want := range []string{"connections", "threads", "timeout", "duration"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %q, want it to mention %s (every problem at once)", err, want)
		}
	}
}

func TestExtraBytes(t *testing.T) { eachIO(t, testExtraBytes) }

// testExtraBytes talks to a server that answers every request with two responses: the
// second one is bytes nobody asked for. Finding 7 of issue 12: each such exchange is a
// protocol error and its connection is closed (the extra response is never credited to the
// next request), and the attempts are exactly the requests the server saw, on both I/O paths.
func testExtraBytes(t *testing.T, mode ioMode) {
	resp := "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
	addr, requests := cannedServer(t, []byte(resp+resp))
	s := run(t, mode, context.Background(), "http://"+addr+"/", Config{Requests: 40, Connections: 2})
	if s.Attempts != 40 || s.Errors.Protocol != 40 || s.Successes != 0 {
		t.Errorf("attempts %d, protocol errors %d, successes %d (errors %+v); want 40, 40, 0", s.Attempts, s.Errors.Protocol, s.Successes, s.Errors)
	}
	if got := requests.Load(); got != s.Attempts {
		t.Errorf("the server saw %d requests, apiperf counted %d attempts", got, s.Attempts)
	}
}
