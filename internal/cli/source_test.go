package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func sourceServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if r.URL.Path == "/missing" {
			w.WriteHeader(404)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// cancelWhenServed calls cancel once served reaches n (polled every 10 ms): a test that
// interrupts a run mid-load waits for the load rather than a fixed time, which a busy
// machine can reach before the first request.
func cancelWhenServed(t *testing.T, served *atomic.Int64, n int64, cancel context.CancelFunc) {
	go func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for served.Load() < n {
			select {
			case <-tick.C:
			case <-t.Context().Done():
				return
			}
		}
		cancel()
	}()
}

func tempFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// `run -s script.lua URL -- args`: the script's init gets the args and its done prints
// after the summary.
func TestRunScript(t *testing.T) {
	srv, n := sourceServer(t)
	script := tempFile(t, "s.lua", `
function init(args) word = args[1] end
function request() return wrk.format(nil, "/" .. word) end
function setup(thread) end
function done(summary, latency, requests)
  io.write(string.format("done: %d requests, p50>0 %s\n", summary.requests, tostring(latency:percentile(50) > 0)))
end
`)
	var out, errb bytes.Buffer
	code := Run(context.Background(), []string{"run", "-q", "-c1", "-t1", "-n", "12", "-s", script, srv.URL, "--", "hi"}, &out, &errb)
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "done: 12 requests, p50>0 true\n") || n.Load() != 12 {
		t.Errorf("server saw %d requests; output:\n%s\nwant done's line for 12 requests", n.Load(), out.String())
	}
	if i, j := strings.Index(out.String(), "Requests/sec"), strings.Index(out.String(), "done:"); i < 0 || j < i {
		t.Errorf("done's output should follow the summary:\n%s", out.String())
	}
}

// A script that does not load: one line with the Lua error and line, exit 2, no traffic.
func TestRunScriptLoadError(t *testing.T) {
	srv, n := sourceServer(t)
	script := tempFile(t, "bad.lua", "wrk.method = 'GET'\nlocal x = = 2\n")
	var out, errb bytes.Buffer
	code := Run(context.Background(), []string{"run", "-q", "-n", "5", "-s", script, srv.URL}, &out, &errb)
	if code != ExitUsage || !strings.Contains(errb.String(), "bad.lua line:2") || strings.Count(errb.String(), "\n") != 1 || n.Load() != 0 {
		t.Errorf("exit %d, %d requests, stderr %q: want exit 2, no traffic, one line naming bad.lua line:2", code, n.Load(), errb.String())
	}
}

// `run --scenario mix.yaml URL`: the per-endpoint table with QPS and TPS follows the summary.
func TestRunScenario(t *testing.T) {
	srv, n := sourceServer(t)
	mix := tempFile(t, "mix.yaml", "endpoints:\n  - {name: ok, path: /ok, weight: 3}\n  - {name: gone, path: /missing}\n")
	var out, errb bytes.Buffer
	code := Run(context.Background(), []string{"run", "-q", "-c2", "-t1", "-n", "40", "--scenario", mix, srv.URL}, &out, &errb)
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %s", code, errb.String())
	}
	got := out.String()
	for _, want := range []string{"Endpoints:", "  ok ", "75.0%", "  gone ", "25.0%", "404=10", "iterations/s (one iteration of the mix is 4 requests)"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if n.Load() != 40 {
		t.Errorf("server saw %d requests, want 40", n.Load())
	}
	// A bad scenario file: every problem, with lines, exit 2.
	bad := tempFile(t, "bad.yaml", "- path: nope\n- path: /a\n  weight: -1\n")
	errb.Reset()
	code = Run(context.Background(), []string{"run", "-q", "-n", "5", "--scenario", bad, srv.URL}, &out, &errb)
	if code != ExitUsage || !strings.Contains(errb.String(), "bad.yaml:1: path") || !strings.Contains(errb.String(), "bad.yaml:2: weight -1") {
		t.Errorf("exit %d, stderr %q: want exit 2 and both problems with their lines", code, errb.String())
	}
}

// A script whose request() fails during the run: the run stops then, not at the end of its
// duration, and the error is the run's (exit 1 and one line naming the script).
func TestRunScriptRequestErrorStops(t *testing.T) {
	srv, _ := sourceServer(t)
	script := tempFile(t, "boom.lua", "local n = 0\nrequest = function()\n  n = n + 1\n  if n > 20 then error('boom') end\n  return wrk.format()\nend\n")
	var out, errb bytes.Buffer
	begin := time.Now()
	// 20 requests end it long before its 30s, even on a busy machine.
	code := Run(context.Background(), []string{"run", "-q", "-c1", "-t1", "-d", "30s", "-s", script, srv.URL}, &out, &errb)
	if took := time.Since(begin); took > 15*time.Second || code != ExitFailed || !strings.Contains(errb.String(), "boom.lua") || !strings.Contains(out.String()+errb.String(), "stopped early") {
		t.Errorf("exit %d after %v (of 30s), stdout %q, stderr %q: want the run stopped early, exit 1, the error naming boom.lua", code, took, out.String(), errb.String())
	}
}

// A script whose request() stalls for most of the run: one warning line says the script set
// the pace. Each call stalls 100 ms: the target shares this process (and -t1 its one P), so
// that its answers wait for the script's loop to be preempted, tens of milliseconds.
func TestRunScriptBusyWarning(t *testing.T) {
	srv, _ := sourceServer(t)
	script := tempFile(t, "slow.lua", "request = function()\n  local t0 = os.clock()\n  while os.clock() - t0 < 0.1 do end\n  return wrk.format()\nend\n")
	var out, errb bytes.Buffer
	code := Run(context.Background(), []string{"run", "-q", "-c1", "-t1", "-d", "1s", "-s", script, srv.URL}, &out, &errb)
	if code != ExitOK || strings.Count(out.String(), "the script, not the target, set the pace") != 1 {
		t.Errorf("exit %d, stdout %q, stderr %q: want one warning that the script set the pace", code, out.String(), errb.String())
	}
}
