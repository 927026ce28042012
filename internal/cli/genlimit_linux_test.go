package cli

import (
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apiperf/apiperf/internal/testenv"
	"github.com/apiperf/apiperf/result"
)

// acceptingServer is a loopback HTTP server counting the connections it accepted.
func acceptingServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			n.Add(1)
		}
	}
	srv.Listener.Close()
	srv.Listener = testenv.Listen(t)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &n
}

// TestTimingGeneratorLimitCLI is issue 28's done-when through the command line, in a network
// namespace whose kernel gives 1000 local ports per source address and target:
// `run -t2 -c1500` gets its 1500 connections (spread over 127.0.0.0/8, said before the run)
// and exits 0; with `--source 127.0.0.1` it prints one line naming port exhaustion, measures
// its 1000 connections, counts no connect error and exits 1; a sweep across the limit marks
// that level generator-limited in run.json, the table and the .dat, and stops there.
func TestTimingGeneratorLimitCLI(t *testing.T) {
	testenv.Timing(t) // 1500 connections dialed within the window: not under -race on 2 cores
	if !testenv.ChildProcess(t, testenv.Child{NetNS: true, PortRange: "40000 40999", Files: 16384}) {
		return
	}
	srv, accepted := acceptingServer(t)
	out := filepath.Join(t.TempDir(), "run.json")
	code, _, stderr := runCLI(t, "run", "--no-history", "-t2", "-c1500", "-d1s", "-o", out, srv.URL+"/")
	if code != ExitOK || accepted.Load() != 1500 || !strings.Contains(stderr, "connections from 2 source addresses 127.0.0.1-127.0.0.2 (chosen in 127.0.0.0/8; 1000 local ports each)") {
		t.Errorf("run -t2 -c1500 = exit %d, %d accepted, stderr %q; want 0, 1500 and the plan stated", code, accepted.Load(), stderr)
	}
	if r, err := result.Load(out); err != nil || r.Last().Errors.Connect != 0 || r.Last().SuccessRate() != 100 {
		t.Errorf("run -t2 -c1500: %v; want no connect error and 100%% success", err)
	}

	srv, accepted = acceptingServer(t)
	code, stdout, stderr := runCLI(t, "run", "--no-history", "-t2", "-c1500", "-d1s", "--source", "127.0.0.1", "-o", out, srv.URL+"/")
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	last := lines[len(lines)-1]
	if code != ExitFailed || !strings.HasPrefix(last, "apiperf: c=1500: generator limit: local ports exhausted (EADDRNOTAVAIL) at ") ||
		strings.Count(stderr, "generator limit") != 1 || !strings.Contains(stdout, "Generator-limited: local ports exhausted") {
		t.Errorf("run --source 127.0.0.1 = exit %d, stderr %q, stdout %q; want 1 and one line naming port exhaustion", code, stderr, stdout)
	}
	r, err := result.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if s := r.Last(); s.GeneratorLimit == nil || s.GeneratorLimit.Connections < 950 || s.Errors.Connect != 0 || s.Successes == 0 || accepted.Load() > 1000 {
		t.Errorf("run --source 127.0.0.1: limit %+v, errors %+v, %d successes, %d accepted; want about 1000 connections measured, no connect error",
			s.GeneratorLimit, s.Errors, s.Successes, accepted.Load())
	}

	srv, _ = acceptingServer(t)
	dir := t.TempDir()
	code, stdout, stderr = runCLI(t, "sweep", "-q", "--no-history", "-t2", "-d1s", "--warmup", "0", "--levels", "500,1500,3000",
		"--source", "127.0.0.1", "--dir", dir, "--name", "lim", srv.URL+"/")
	if code != ExitFailed || !strings.Contains(stdout, "generator-limited: local ports ran out at ") {
		t.Errorf("sweep across the limit = exit %d, table %q, stderr %q; want 1 and c=1500 marked generator-limited", code, stdout, stderr)
	}
	r, err = result.Load(filepath.Join(dir, "lim", "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	lv := r.Sweep.Levels
	if len(lv) != 2 || lv[0].GeneratorLimited() || !lv[1].GeneratorLimited() || r.Sweep.Peak != 0 || r.Sweep.Stop == nil || lv[1].Errors.Connect != 0 {
		t.Errorf("sweep levels %d (limited: %v), peak %d, stop %+v; want c=500 and a generator-limited c=1500 (no connect error) that is not the peak, then a stop",
			len(lv), len(lv) > 1 && lv[1].GeneratorLimited(), r.Sweep.Peak, r.Sweep.Stop)
	}
}
