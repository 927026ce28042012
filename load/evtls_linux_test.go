//go:build linux

package load

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
)

// tlsModes are the event-loop I/O ways a TLS test runs on.
var tlsModes = []struct {
	name string
	mode ioMode
}{{"evloop", ioEvloop}, {"uring", ioUring}}

// TestTLSOnEvloop: HTTPS runs on the event loops, closed and open loop, epoll and io_uring:
// every request answered, every connection's handshake made by a loop and counted in the
// connect time.
func TestTLSOnEvloop(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "secure") }))
	defer srv.Close()
	for _, m := range tlsModes {
		for _, open := range []bool{false, true} {
			name := m.name + "/closed"
			cfg := Config{Requests: 200, Connections: 4, Insecure: true, Timeout: measure.Duration(10 * time.Second)}
			if open {
				name = m.name + "/open"
				cfg.Rate, cfg.MaxConnections = 1000, 4
			}
			t.Run(name, func(t *testing.T) {
				h0 := tlsLoopHandshakes.Load()
				s := run(t, m.mode, context.Background(), srv.URL, cfg)
				if s.Successes != 200 || s.Errors.Total() != 0 {
					t.Errorf("%d successes, errors %+v; want 200 and none", s.Successes, s.Errors)
				}
				if h := tlsLoopHandshakes.Load() - h0; h < 1 || h != s.Connects {
					t.Errorf("the event loops made %d handshakes for %d connections; want one per connection", h, s.Connects)
				}
				if s.ConnectTime <= 0 {
					t.Errorf("connect time %v, want the handshakes' time", s.ConnectTime)
				}
			})
		}
	}
}

// TestTLSResumption: a connection opened after another resumes its session, as wrk does:
// a server that closes the connection after every response makes every request reconnect.
func TestTLSResumption(t *testing.T) {
	for _, m := range tlsModes {
		for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
			t.Run(m.name+"/"+tls.VersionName(v), func(t *testing.T) {
				srv := tlsServer(t, v, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Connection", "close")
					io.WriteString(w, "once")
				}))
				h0, r0 := tlsLoopHandshakes.Load(), tlsLoopResumed.Load()
				s := run(t, m.mode, context.Background(), srv.URL, Config{Requests: 40, Connections: 2, Insecure: true, Timeout: measure.Duration(10 * time.Second)})
				h, r := tlsLoopHandshakes.Load()-h0, tlsLoopResumed.Load()-r0
				if s.Successes != 40 || h < 20 || r < h/2 {
					t.Errorf("%d successes, %d handshakes, %d resumed; want 40, one handshake a request, most resumed", s.Successes, h, r)
				}
			})
		}
	}
}

// tlsServer starts an httptest TLS server of TLS versions up to max, with suites (nil: Go's
// choice), serving h; it stops when the test ends.
func tlsServer(t *testing.T, max uint16, suites []uint16, h http.Handler) *httptest.Server {
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = &tls.Config{MaxVersion: max, CipherSuites: suites}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// TestTLSFailures: every way a handshake fails is a connect error with the same warning on
// every I/O path: a handshake that never ends (a server that accepts and says nothing) and
// one whose server hangs up.
func TestTLSFailures(t *testing.T) {
	mute, hangup := silentServer(t, false), silentServer(t, true)
	for _, c := range []struct {
		addr string
		why  []string // the reasons it may give (a hang-up before or after the ClientHello came)
	}{
		{mute, []string{"context deadline exceeded"}},
		{hangup, []string{"EOF", "connection reset by peer"}},
	} {
		eachIO(t, func(t *testing.T, mode ioMode) {
			s := run(t, mode, context.Background(), "https://"+c.addr+"/", Config{Requests: 2, Connections: 1, Threads: 1, Timeout: measure.Duration(300 * time.Millisecond)})
			if s.Errors.Connect != 2 || s.Successes != 0 || !tlsWarned(s.Warnings, c.addr, c.why) {
				t.Errorf("errors %+v, warnings %q; want 2 connect errors and %q failed: one of %q", s.Errors, s.Warnings, TLSPrefix+c.addr, c.why)
			}
		})
	}
}

// tlsWarned reports whether ws holds the TLS warning for addr with one of the reasons why.
func tlsWarned(ws []string, addr string, why []string) bool {
	for _, w := range ws {
		for _, y := range why {
			if w == TLSPrefix+addr+" failed: "+y || strings.HasSuffix(w, ": "+y) && strings.HasPrefix(w, TLSPrefix+addr+" failed: ") {
				return true
			}
		}
	}
	return false
}

// silentServer accepts connections and says nothing; hangup closes each at once.
func silentServer(t *testing.T, hangup bool) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if hangup {
				c.Close()
				continue
			}
			go func() { io.Copy(io.Discard, c); c.Close() }()
		}
	}()
	return ln.Addr().String()
}

// TestTLSEvloopAllocs: on TLS the event loops allocate nothing per request either, closed and
// open loop. The server runs in a process of its own (this test binary, TestTLSServerProcess),
// so its allocations are not counted.
func TestTLSEvloopAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	url := "https://" + tlsServerProcess(t) + "/healthz"
	for _, p := range []struct {
		name string
		mode ioMode
		cfg  Config
	}{
		{"evloop/closed", ioEvloop, Config{Connections: 20}},
		{"uring/closed", ioUring, Config{Connections: 20}},
		{"evloop/open", ioEvloop, Config{Rate: 20000, Connections: 20, MaxConnections: 20}},
	} {
		t.Run(p.name, func(t *testing.T) {
			cfg := p.cfg
			cfg.Threads, cfg.Insecure, cfg.Timeout = 1, true, measure.Duration(10*time.Second)
			checkNoAllocs(t, p.mode, url, cfg, nil)
		})
	}
}

// tlsServerProcess starts TestTLSServerProcess in a child process and returns its address.
func tlsServerProcess(t testing.TB) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestTLSServerProcess$")
	cmd.Env = append(os.Environ(), "APIPERF_TLS_SERVER_PROCESS=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the TLS server process said %q: %v", line, err)
	}
	return strings.TrimSpace(line)
}

// TestTLSServerProcess is the TLS server of TestTLSEvloopAllocs (it runs only as its child):
// it answers every request with nginxResponse and ends when its stdin closes.
func TestTLSServerProcess(t *testing.T) {
	if os.Getenv("APIPERF_TLS_SERVER_PROCESS") != "1" {
		t.Skip("the child process of TestTLSEvloopAllocs")
	}
	srv := httptest.NewUnstartedServer(nil)
	srv.StartTLS() // for its certificate
	cfg := srv.TLS.Clone()
	srv.Close()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go answerTLS(c)
		}
	}()
	os.Stdout.WriteString(ln.Addr().String() + "\n")
	io.Copy(io.Discard, os.Stdin)
}

// answerTLS writes nginxResponse for every request read on c.
func answerTLS(c net.Conn) {
	defer c.Close()
	buf := make([]byte, 4096)
	for {
		n, err := c.Read(buf)
		if err != nil {
			return
		}
		for i := 0; i+3 < n; i++ {
			if string(buf[i:i+4]) == "\r\n\r\n" {
				if _, err := c.Write(nginxResponse); err != nil {
					return
				}
			}
		}
	}
}

// TestTLSRecords: the loop's record opener (AES-GCM, TLS 1.2 and 1.3) and crypto/tls's
// reader (other suites) read every response whole: small ones, ones over many records and
// reads, and ones that end with the connection (no length: close_notify and the FIN end
// them).
func TestTLSRecords(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 10000) // 160 KB: ten records and more
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			io.WriteString(w, big)
		case "/eof":
			w.Header().Set("Connection", "close")
			w.(http.Flusher).Flush() // no Content-Length: the body ends with the connection
			io.WriteString(w, big[:5000])
		default:
			io.WriteString(w, "small")
		}
	})
	for _, suite := range []struct {
		name   string
		max    uint16
		suites []uint16
		opener bool // the loop opens the records itself
	}{
		{"TLS1.3", tls.VersionTLS13, nil, true},
		{"TLS1.2/AES128-GCM", tls.VersionTLS12, []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256}, true},
		{"TLS1.2/AES256-GCM", tls.VersionTLS12, []uint16{tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384}, true},
		{"TLS1.2/ChaCha20", tls.VersionTLS12, []uint16{tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305}, false},
	} {
		srv := tlsServer(t, suite.max, suite.suites, h)
		for _, m := range tlsModes {
			for _, path := range []string{"/", "/big", "/eof"} {
				t.Run(suite.name+"/"+m.name+path, func(t *testing.T) {
					o0, h0, r0 := tlsLoopOpeners.Load(), tlsLoopHandshakes.Load(), tlsLoopResumed.Load()
					s := run(t, m.mode, context.Background(), srv.URL+path, Config{Requests: 30, Connections: 3, Insecure: true, Timeout: measure.Duration(10 * time.Second)})
					if s.Successes != 30 || s.Errors.Total() != 0 {
						t.Fatalf("%d successes, errors %+v; want 30 and none", s.Successes, s.Errors)
					}
					want := map[string]int64{"/": 5, "/big": int64(len(big)), "/eof": 5000}[path]
					if body := s.Bytes / 30; body < want {
						t.Errorf("%d bytes a response; want the body's %d and its head", body, want)
					}
					o, h, r := tlsLoopOpeners.Load()-o0, tlsLoopHandshakes.Load()-h0, tlsLoopResumed.Load()-r0
					want = 0
					switch {
					case suite.opener:
						want = h // resumed TLS 1.2 sessions too (their secret kept by the run)
					}
					if o != want {
						t.Errorf("%d of %d connections (%d resumed) had the loop's opener; want %d", o, h, r, want)
					}
				})
			}
		}
	}
}

// BenchmarkTLSExchange is one HTTPS request and response, over 1 and 50 connections, against
// a TLS server in a process of its own, on the event loop (epoll and io_uring) and on a
// goroutine per connection: the engine's whole per-request path over TLS (seal, send, wait,
// receive, open, parse, record). A run's setup is spread over b.N requests.
func BenchmarkTLSExchange(b *testing.B) {
	addr := tlsServerProcess(b)
	url := "https://" + addr + "/healthz"
	for _, m := range []struct {
		name string
		mode ioMode
	}{{"evloop", ioEvloop}, {"uring", ioUring}, {"goroutines", ioGoroutines}} {
		for _, conns := range []int{1, 50} {
			b.Run(fmt.Sprintf("%s/c%d", m.name, conns), func(b *testing.B) {
				src, _ := scenario.NewStatic(scenario.Scenario{URL: url})
				tg, _ := scenario.ParseTarget(url)
				cfg := Config{Connections: conns, Threads: 1, Requests: int64(max(b.N, conns)), Insecure: true, Timeout: measure.Duration(10 * time.Second)}
				b.ReportAllocs()
				b.ResetTimer()
				s, err := Run(context.Background(), cfg, src, tg, withIO(m.mode))
				b.StopTimer()
				if err != nil || s.Successes != cfg.Requests {
					b.Fatalf("Run: %v, %d successes of %d (errors %+v)", err, s.Successes, cfg.Requests, s.Errors)
				}
			})
		}
	}
}

// TestTLSHandshakeInterrupted: a run stopped (Ctrl-C) while its handshakes wait on a server
// that never answers ends them all: no coroutine is left behind.
func TestTLSHandshakeInterrupted(t *testing.T) {
	mute := silentServer(t, false)
	for _, m := range tlsModes {
		t.Run(m.name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			ctx, cancel := context.WithCancel(context.Background())
			h0 := tlsLoopHandshakes.Load()
			done := make(chan *measure.Step)
			go func() {
				done <- run(t, m.mode, ctx, "https://"+mute+"/", Config{Duration: measure.Duration(30 * time.Second), Connections: 8, Timeout: measure.Duration(20 * time.Second)})
			}()
			time.AfterFunc(200*time.Millisecond, cancel) // the handshakes are under way (their timeout is 20 s)
			select {
			case s := <-done:
				if !s.Interrupted || s.Successes != 0 || tlsLoopHandshakes.Load() != h0 {
					t.Errorf("interrupted %v, %d successes; want an interrupted run with no handshake done", s.Interrupted, s.Successes)
				}
			case <-time.After(15 * time.Second):
				t.Fatal("the run did not stop within 15 s of its interruption")
			}
			deadline := time.Now().Add(10 * time.Second)
			for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond) // waiting for goroutines to end, not for a time
			}
			if n := runtime.NumGoroutine(); n > before {
				t.Errorf("%d goroutines after the run, %d before: the handshakes' coroutines were left", n, before)
			}
		})
	}
}

// TestTLSManyConnections: many more connections than handshakes a loop runs at once all
// open, and none passes its deadline waiting for its turn.
func TestTLSManyConnections(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	for _, m := range tlsModes {
		t.Run(m.name, func(t *testing.T) {
			s := run(t, m.mode, context.Background(), srv.URL, Config{Requests: 600, Connections: 300, Threads: 1, Insecure: true, Timeout: measure.Duration(5 * time.Second)})
			if s.Successes != 600 || s.Errors.Total() != 0 || s.Connects != 300 {
				t.Errorf("%d successes on %d connections, errors %+v; want 600 on 300 and none", s.Successes, s.Connects, s.Errors)
			}
		})
	}
}

// putHook is a session cache that calls during after each Put, from inside it: as another
// loop's connection would, resuming the session the moment the cache shows it.
type putHook struct {
	tls.ClientSessionCache
	during func(key string)
}

func (p *putHook) Put(key string, cs *tls.ClientSessionState) {
	p.ClientSessionCache.Put(key, cs)
	p.during(key)
}

// TestSessionSecretBeforeSession: a TLS 1.2 session's master secret is kept before the run's
// cache hands the session out, so a connection on another loop that resumes it at once still
// opens its records on the loop. (Beside stress-ng, TestTLSRecords saw 28 of 30 connections
// with the loop's opener: two resumed a session put but whose secret was not yet stored.)
func TestSessionSecretBeforeSession(t *testing.T) {
	var secrets sessionSecrets
	cs := &tls.ClientSessionState{}
	var firstKeys, otherKeys keyLog
	firstKeys.master = []byte("the master secret of the full handshake")
	shared := &putHook{ClientSessionCache: tls.NewLRUClientSessionCache(8)}
	other := &resumeCache{ClientSessionCache: shared, secrets: &secrets, keys: &otherKeys}
	shared.during = func(key string) {
		if got, ok := other.Get(key); !ok || got != cs {
			t.Fatalf("the cache did not hand out the session just put")
		}
	}
	first := &resumeCache{ClientSessionCache: shared, secrets: &secrets, keys: &firstKeys}
	first.Put("127.0.0.1:443", cs)
	if string(otherKeys.resumed) != string(firstKeys.master) {
		t.Errorf("a connection resuming the session during its Put found secret %q; want %q", otherKeys.resumed, firstKeys.master)
	}
}
