package load

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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
