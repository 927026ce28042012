package cli

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Bad --source input is one line and exit 2, before any traffic.
func TestSourceBadInput(t *testing.T) {
	ok, _ := sourceServer(t)
	for _, tc := range []struct {
		source, stderr string
	}{
		{"10.0.0.300", `--source "10.0.0.300": "10.0.0.300" is not an IP address`},
		{"10.0.0.8-10.0.0.5", "FIRST not above LAST"},
		{"192.0.2.7", "--source 192.0.2.7: not an address of this machine"}, // TEST-NET-1
		{"::1", "the target 127.0.0.1 is IPv4; give IPv4 source addresses"},
	} {
		code, _, stderr := runCLI(t, "run", "-q", "--no-history", "-n", "5", "--source", tc.source, ok.URL+"/")
		if code != ExitUsage || !strings.Contains(stderr, tc.stderr) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("run --source %s = exit %d, stderr %q; want exit 2 and one line with %q", tc.source, code, stderr, tc.stderr)
		}
	}
}

// A --source address of this machine is used, and said before the run: the target sees
// the connections come from those addresses.
func TestSourceBanner(t *testing.T) {
	var mu sync.Mutex
	from := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		mu.Lock()
		from[host] = true
		mu.Unlock()
	}))
	defer srv.Close()
	for _, io := range []string{"goroutines", "evloop"} {
		t.Setenv("APIPERF_IO", io)
		mu.Lock()
		clear(from)
		mu.Unlock()
		code, _, stderr := runCLI(t, "run", "--no-history", "-n", "20", "-c2", "--source", "127.0.0.2-127.0.0.3", srv.URL+"/")
		mu.Lock()
		got := fmt.Sprint(from)
		mu.Unlock()
		if code != ExitOK || !strings.Contains(stderr, "apiperf: connections from 2 source addresses 127.0.0.2-127.0.0.3 (--source;") || got != "map[127.0.0.2:true 127.0.0.3:true]" {
			t.Errorf("APIPERF_IO=%s run --source 127.0.0.2-127.0.0.3 = exit %d, stderr %q, target saw %s; want 0, the plan stated, both addresses", io, code, stderr, got)
		}
	}
}

// The done-when of issue 28: capacity against a port where nothing listens gives up like
// run does, within 2 s, exit 1, saying why (5 s here: room for a busy machine, still far
// from probing on).
func TestCapacityUnreachable(t *testing.T) {
	start := time.Now()
	code, _, stderr := runCLI(t, "capacity", "-q", "--no-history", "--dir", t.TempDir(), "http://127.0.0.1:1/")
	took := time.Since(start)
	if code != ExitFailed || !strings.Contains(stderr, "unable to connect to 127.0.0.1:1: connection refused") {
		t.Errorf("capacity http://127.0.0.1:1/ = exit %d, stderr %q; want 1 and why", code, stderr)
	}
	if took > 5*time.Second {
		t.Errorf("capacity http://127.0.0.1:1/ took %v; want at most 5s", took)
	}
}
