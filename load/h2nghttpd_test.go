package load

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apiperf/apiperf/target"
)

// nghttpd starts nghttp2's server (a server no one here wrote) on a free loopback port with
// -v, so every request it receives is a "recv HEADERS frame" line of its log. With tls it
// serves h2 with a fresh self-signed certificate, else h2c (--no-tls). stop ends it and
// returns its log. .ci/run installs nghttp2-server.
func nghttpd(t testing.TB, tls, verbose bool, args ...string) (url string, stop func() string) {
	t.Helper()
	bin, err := exec.LookPath("nghttpd")
	if err != nil {
		t.Skip("nghttpd not installed (apt-get install nghttp2-server; .ci/run does)")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ok"), []byte("ok\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	argv := append([]string{"-a", "127.0.0.1", "-d", dir}, args...)
	if verbose {
		argv = append(argv, "-v")
	}
	scheme := "http"
	if tls {
		certPEM, keyPEM, err := target.SelfSigned()
		if err != nil {
			t.Fatal(err)
		}
		cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
		if err := os.WriteFile(cert, certPEM, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(key, keyPEM, 0o600); err != nil {
			t.Fatal(err)
		}
		argv = append(argv, fmt.Sprint(port), key, cert)
		scheme = "https"
	} else {
		argv = append(argv, "--no-tls", fmt.Sprint(port))
	}
	var log bytes.Buffer
	cmd := exec.Command(bin, argv...)
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := false
	stop = func() string {
		if !done {
			done = true
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_ = cmd.Wait()
		}
		return log.String()
	}
	t.Cleanup(func() { stop() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(5 * time.Second); ; {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("nghttpd %v did not listen on %s: %v; log:\n%s", argv, addr, err, stop())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return scheme + "://" + addr + "/ok", stop
}

func TestH2ExactCountNghttpd(t *testing.T) {
	for _, tls := range []bool{false, true} {
		url, stop := nghttpd(t, tls, true)
		s := mustRunH2(t, url, Config{Requests: 10000, Connections: 4, Streams: 10})
		got := strings.Count(stop(), "recv HEADERS frame")
		if s.Requests != 10000 || s.Successes != 10000 || got != 10000 {
			t.Errorf("nghttpd %s, -n 10000 -c 4 --streams 10: recorded %d responses (%d successes, errors %v); nghttpd logged %d requests; want 10000 each",
				url, s.Requests, s.Successes, s.Errors, got)
		}
	}
}

func TestH2NghttpdMaxConcurrentStreams(t *testing.T) {
	url, stop := nghttpd(t, false, true, "-m", "2")
	s := mustRunH2(t, url, Config{Requests: 1000, Connections: 2, Streams: 10})
	got := strings.Count(stop(), "recv HEADERS frame")
	if s.Requests != 1000 || got != 1000 || s.Errors.Total() != 0 {
		t.Errorf("nghttpd -m 2, --streams 10: %d responses, errors %v, nghttpd logged %d; want 1000, none, 1000", s.Requests, s.Errors, got)
	}
	if s.HTTP2.MaxConcurrent != 2 {
		t.Errorf("nghttpd -m 2: step.HTTP2.MaxConcurrent = %d, want 2", s.HTTP2.MaxConcurrent)
	}
}

// BenchmarkH2Nghttpd runs b.N requests over 10 connections x 10 streams at nghttpd (h2c).
func BenchmarkH2Nghttpd(b *testing.B) {
	url, _ := nghttpd(b, false, false)
	b.ReportAllocs()
	b.ResetTimer()
	s, err := runH2(b, url, Config{Requests: int64(b.N), Connections: 10, Streams: 10, Threads: 1})
	if err != nil || s.Requests != int64(b.N) {
		b.Fatalf("%v %v", err, s.Errors)
	}
}
