package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/target"
)

func TestServeUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string // in the one-line stderr message
	}{
		// A non-loopback address is refused without --allow-remote.
		{[]string{"--addr", "0.0.0.0:0"}, `addr "0.0.0.0:0" is not a loopback address`},
		// Unknown flags and stray arguments.
		{[]string{"--bogus"}, "unknown flag: --bogus"},
		{[]string{"extra"}, `unexpected argument "extra"`},
		// Values the target cannot serve, all reported at once.
		{[]string{"--status", "42", "--stall", "1s"}, "status 42 is outside [200, 599]; stall needs stall-every"},
		{[]string{"--max-rps", "-5"}, "max-rps -5"},
		{[]string{"--delay", "soon"}, `invalid argument "soon"`},
		// Middleware belongs to demo mode and must be known.
		{[]string{"--middleware", "logger"}, "--middleware needs --demo"},
		{[]string{"--demo", "--middleware", "logger,gzip"}, `unknown middleware "gzip"`},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), append([]string{"serve"}, tt.args...), &stdout, &stderr)
		last := strings.TrimSpace(stderr.String())
		if i := strings.LastIndex(last, "\n"); i >= 0 {
			last = last[i+1:]
		}
		if code != ExitUsage || !strings.Contains(last, tt.want) || stdout.Len() != 0 {
			t.Errorf("apiperf serve %v = exit %d, stderr %q, stdout %q; want exit 2, %q and no stdout",
				tt.args, code, stderr.String(), stdout.String(), tt.want)
		}
	}
}

func TestServeRuns(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr lockedBuffer
	exit := make(chan int, 1)
	go func() {
		exit <- Run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--demo", "--middleware", "none"}, &stdout, &stderr)
	}()
	var url string
	for deadline := time.Now().Add(10 * time.Second); url == "" && time.Now().Before(deadline); {
		if line, ok := strings.CutSuffix(stdout.String(), "\n"); ok {
			url, _ = strings.CutPrefix(line, target.ListeningPrefix)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") || strings.HasSuffix(url, ":0") {
		t.Fatalf("stdout %q: want one line %q + http://127.0.0.1:PORT", stdout.String(), target.ListeningPrefix)
	}
	// --demo turns pprof and metrics on by default.
	getOK(t, url, "/healthz", "/api/users/3", "/metrics", "/debug/pprof/")
	cancel()
	select {
	case code := <-exit:
		if code != ExitOK {
			t.Errorf("apiperf serve after cancel: exit %d, stderr %q; want 0", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("apiperf serve did not stop within 10s of cancel")
	}
	if n := strings.Count(stdout.String(), "\n"); n != 1 {
		t.Errorf("stdout has %d lines, want exactly 1: %q", n, stdout.String())
	}
}

// serve --help lists every demo bottleneck the demo server has (/demo/timing included).
func TestServeHelpListsDemoPaths(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := Run(context.Background(), []string{"serve", "--help"}, &out, &errOut); code != ExitOK {
		t.Fatalf("serve --help = exit %d, stderr %q", code, errOut.String())
	}
	for _, p := range append(target.DemoPaths(), "/demo/timing") {
		if !strings.Contains(out.String(), p) {
			t.Errorf("serve --help lacks %s:\n%s", p, out.String())
		}
	}
}

// getOK checks that GET base+path answers 200 for every path.
func getOK(t *testing.T, base string, paths ...string) {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second}
	for _, path := range paths {
		resp, err := c.Get(base + path)
		if err != nil {
			t.Fatalf("GET %s%s: %v", base, path, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("GET %s%s: status %d, want 200", base, path, resp.StatusCode)
		}
	}
}
