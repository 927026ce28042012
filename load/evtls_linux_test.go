//go:build linux

package load

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
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
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		io.WriteString(w, "once")
	}))
	defer srv.Close()
	for _, m := range tlsModes {
		for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
			t.Run(m.name+"/"+tls.VersionName(v), func(t *testing.T) {
				srv.TLS.MaxVersion = v
				h0, r0 := tlsLoopHandshakes.Load(), tlsLoopResumed.Load()
				s := run(t, m.mode, context.Background(), srv.URL, Config{Requests: 40, Connections: 2, Insecure: true, Timeout: measure.Duration(10 * time.Second)})
				h, r := tlsLoopHandshakes.Load()-h0, tlsLoopResumed.Load()-r0
				if s.Successes != 40 || h < 20 || r < h/2 {
					t.Errorf("%d successes, %d handshakes, %d resumed; want 40, one handshake a request, most resumed", s.Successes, h, r)
				}
			})
		}
	}
	srv.TLS.MaxVersion = 0
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
		bothIO(t, func(t *testing.T, mode ioMode) {
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
func tlsServerProcess(t *testing.T) string {
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
