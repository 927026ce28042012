package load

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apiperf/apiperf/internal/testenv"
	"github.com/apiperf/apiperf/measure"
)

// nsPorts is the port range of the tests' network namespace: 1000 ports per source address
// and target, as in issue 28.
const nsPorts = "40000 40999"

// countingServer is a loopback HTTP/1.1 server (HTTP/2 too with h2) that counts the
// connections it accepted; each handler call waits hold first.
func countingServer(t *testing.T, h2 bool, hold time.Duration) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var accepted atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hold > 0 {
			select {
			case <-time.After(hold):
			case <-r.Context().Done():
			}
		}
		io.WriteString(w, "ok")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			accepted.Add(1)
		}
	}
	srv.Listener.Close()
	srv.Listener = testenv.Listen(t)
	if h2 {
		srv.Config.Protocols = new(http.Protocols)
		srv.Config.Protocols.SetUnencryptedHTTP2(true)
		srv.Config.Protocols.SetHTTP1(true)
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &accepted
}

// ioPaths are the ways a load opens connections: every I/O path of HTTP/1.1, and HTTP/2.
var ioPaths = []struct {
	name string
	mode ioMode
	h2   bool
}{{"goroutines", ioGoroutines, false}, {"evloop", ioEvloop, false}, {"uring", ioUring, false}, {"http2", ioAuto, true}}

// TestTimingPortLimitInNamespace is issue 28's done-when, on every I/O path, in a network namespace
// whose kernel gives 1000 local ports per source address and target: 1500 connections to a
// 127.0.0.1 target all open (spread over 127.0.0.0/8 by apiperf), with no connect error;
// with --source 127.0.0.1 only, the load stops opening at the port limit, counts no connect
// error against the target, and the step says generator-limited (EADDRNOTAVAIL).
func TestTimingPortLimitInNamespace(t *testing.T) {
	testenv.Timing(t) // 1500 connections dialed within the window: not under -race on 2 cores
	if !testenv.ChildProcess(t, testenv.Child{NetNS: true, PortRange: nsPorts, Files: 16384}) {
		return
	}
	for _, p := range ioPaths {
		t.Run(p.name, func(t *testing.T) {
			cfg := Config{Connections: 1500, Threads: 2, Duration: measure.Duration(2 * time.Second), Timeout: measure.Duration(2 * time.Second), HTTP2: p.h2}
			// A new server (a new port) per load: each target port has its own 1000 ports.
			// Responses held 300 ms keep the load light: the test is about connections.
			srv, accepted := countingServer(t, p.h2, 300*time.Millisecond)
			s := run(t, p.mode, context.Background(), srv.URL+"/", cfg)
			if s.GeneratorLimit != nil || s.Errors.Connect != 0 || s.Successes == 0 || s.Successes != s.Attempts || accepted.Load() != 1500 || s.Connects != 1500 {
				t.Errorf("-c1500 spread: limit %v, errors %+v, %d of %d attempts succeeded, target accepted %d, opened %d; want no limit, no error, 100%%, 1500 accepted and opened",
					s.GeneratorLimit, s.Errors, s.Successes, s.Attempts, accepted.Load(), s.Connects)
			}

			srv, accepted = countingServer(t, p.h2, 300*time.Millisecond)
			cfg.LocalAddrs = "127.0.0.1"
			s = run(t, p.mode, context.Background(), srv.URL+"/", cfg)
			g := s.GeneratorLimit
			if g == nil || g.Errno != "EADDRNOTAVAIL" || g.Resource != "local ports" || g.Connections < 950 || g.Connections > 1000 || g.Wanted != 1500 {
				t.Fatalf("--source 127.0.0.1: limit %+v; want EADDRNOTAVAIL on local ports at about 1000 of 1500 connections", g)
			}
			if s.Errors.Connect != 0 || s.Successes == 0 || accepted.Load() > 1000 {
				t.Errorf("--source 127.0.0.1: errors %+v, %d successes, target accepted %d; want no connect error, successes, at most 1000 accepted",
					s.Errors, s.Successes, accepted.Load())
			}
		})
	}
}

// TestTimingOpenLoopPoolLimitInNamespace: an open loop whose pool must grow past the port limit
// stops growing there and says generator-limited, with no connect error counted.
func TestTimingOpenLoopPoolLimitInNamespace(t *testing.T) {
	testenv.Timing(t)
	if !testenv.ChildProcess(t, testenv.Child{NetNS: true, PortRange: nsPorts, Files: 16384}) {
		return
	}
	for _, p := range ioPaths[:2] {
		t.Run(p.name, func(t *testing.T) {
			// 4000 req/s of 400 ms responses keep 1600 requests in flight: more than 1000 ports.
			srv, accepted := countingServer(t, false, 400*time.Millisecond)
			cfg := Config{Connections: 10, MaxConnections: 2000, Rate: 4000, Threads: 2, Duration: measure.Duration(2 * time.Second),
				Timeout: measure.Duration(2 * time.Second), LocalAddrs: "127.0.0.1"}
			s := run(t, p.mode, context.Background(), srv.URL+"/", cfg)
			g := s.GeneratorLimit
			if g == nil || g.Errno != "EADDRNOTAVAIL" || g.Connections > 1000 || s.Errors.Connect != 0 || accepted.Load() > 1000 {
				t.Errorf("open loop past the port limit: limit %+v, errors %+v, target accepted %d; want EADDRNOTAVAIL at most 1000 connections, no connect error",
					g, s.Errors, accepted.Load())
			}
		})
	}
}

// targetEnv passes a target's URL to a child process.
const targetEnv = "APIPERF_TEST_TARGET"

// TestFileLimit: a child process whose open-file limit is 100 asks for 200 connections to a
// target in this process: it opens what its descriptors allow, counts no connect error, and
// the step says generator-limited (EMFILE), on every I/O path.
func TestFileLimit(t *testing.T) {
	url := os.Getenv(targetEnv)
	if url == "" {
		srv, _ := countingServer(t, true, 0)
		url = srv.URL + "/"
	}
	if !testenv.ChildProcess(t, testenv.Child{Files: 100, Env: []string{targetEnv + "=" + url}}) {
		return
	}
	for _, p := range ioPaths {
		t.Run(p.name, func(t *testing.T) {
			cfg := Config{Connections: 200, Threads: 2, Duration: measure.Duration(time.Second), Timeout: measure.Duration(2 * time.Second), HTTP2: p.h2}
			s := run(t, p.mode, context.Background(), url, cfg)
			g := s.GeneratorLimit
			if g == nil || g.Errno != "EMFILE" || g.Connections < 10 || g.Connections > 100 || s.Errors.Connect != 0 || s.Successes == 0 {
				t.Errorf("200 connections under a limit of 100 files: limit %+v, errors %+v, %d successes; want EMFILE at under 100 connections, no connect error",
					g, s.Errors, s.Successes)
			}
		})
	}
}

// TestOpenLoopNoDescriptorLeft: an open loop whose process has no file descriptor left for a
// connection makes no attempt, and says so: it achieved no rate (it showed "achieved 3.33
// req/s" beside "0 of 0 attempts": the sends it never made counted).
func TestOpenLoopNoDescriptorLeft(t *testing.T) {
	url := os.Getenv(targetEnv)
	if url == "" {
		srv, _ := countingServer(t, false, 0)
		url = srv.URL + "/"
	}
	if !testenv.ChildProcess(t, testenv.Child{Files: 64, Env: []string{targetEnv + "=" + url}}) {
		return
	}
	var held []*os.File
	defer func() {
		for _, f := range held {
			f.Close()
		}
	}()
	for {
		f, err := os.Open(os.DevNull)
		if err != nil {
			break // EMFILE: no descriptor left
		}
		held = append(held, f)
	}
	s := run(t, ioGoroutines, context.Background(), url, Config{Rate: 10, Connections: 2, Threads: 1, Duration: measure.Duration(time.Second)})
	if s.Attempts != 0 || s.Open == nil || s.Open.Sent != 0 || s.SendRate() != 0 || s.GeneratorLimit == nil {
		t.Errorf("no descriptor left: %d attempts, open %+v, achieved %.2f req/s, limit %v; want no attempt, nothing sent, no rate, generator-limited",
			s.Attempts, s.Open, s.SendRate(), s.GeneratorLimit)
	}
}
