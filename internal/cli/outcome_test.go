package cli

import (
	"bytes"
	"context"
	"path/filepath"

	"github.com/apiperf/apiperf/result"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Finding 6 of issue 12: exit codes CI can trust. A run where nothing succeeded exits 1 with
// the reason; an unreachable target stops after the connect grace, like wrk.
func TestExitCodes(t *testing.T) {
	ok, _ := sourceServer(t)
	// A port nothing listens on: bind one, then close it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String() + "/"
	l.Close()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(2 * time.Second):
		}
	}))
	defer slow.Close()
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr string
		within time.Duration
	}{
		{"something succeeded", []string{"-n", "20", ok.URL + "/"}, ExitOK, "", 0},
		{"all 404", []string{"-n", "20", ok.URL + "/missing"}, ExitFailed, "no request succeeded: 20 attempts (status 20)", 0},
		{"all timeouts", []string{"-c1", "-d", "600ms", "-T", "100ms", slow.URL + "/"}, ExitFailed, "no request succeeded", 0},
		// Stopped by the 1 s connect grace, well before the 30 s duration (room for -race).
		{"unreachable", []string{"-d30s", dead}, ExitFailed, "unable to connect to " + strings.TrimSuffix(strings.TrimPrefix(dead, "http://"), "/") + ": connection refused", 10 * time.Second},
		{"the done-when: port 1", []string{"-d30s", "http://127.0.0.1:1/"}, ExitFailed, "unable to connect to 127.0.0.1:1: connection refused", 10 * time.Second},
		{"bad input", []string{"-c", "x", ok.URL + "/"}, ExitUsage, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			code, _, stderr := runCLI(t, append([]string{"run", "-q", "--no-history"}, tc.args...)...)
			took := time.Since(start)
			if code != tc.code || !strings.Contains(stderr, tc.stderr) {
				t.Errorf("run %s = exit %d, stderr %q; want %d and %q", strings.Join(tc.args, " "), code, stderr, tc.code, tc.stderr)
			}
			if tc.within > 0 && took > tc.within {
				t.Errorf("run %s took %v; want at most %v", strings.Join(tc.args, " "), took, tc.within)
			}
		})
	}
}

// Finding 7 of issue 12: a capacity probe cut short by Ctrl-C neither passes nor fails, so it
// bounds nothing (it was the limit before), and the run exits 1.
func TestCapacityInterruptedProbe(t *testing.T) {
	srv, served := sourceServer(t)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cancelWhenServed(t, served, 20, cancel) // in the first probe (50 requests/s for 3s)
	var o, e bytes.Buffer
	code := Run(ctx, []string{"capacity", "--start", "50", "-d", "3s", "--warmup", "0", "--dir", dir, "--name", "cut", "--no-history", srv.URL + "/"}, &o, &e)
	doc, err := result.Load(filepath.Join(dir, "cut", "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	c := doc.Capacity
	if code != ExitFailed || len(c.Probes) != 1 || c.Limit != 0 || c.Answer != 0 || !doc.Steps[0].Interrupted {
		t.Errorf("capacity interrupted in its first probe: exit %d, probes %+v, limit %g, answer %g; want 1, one interrupted probe bounding nothing\n%s", code, c.Probes, c.Limit, c.Answer, &e)
	}
}
