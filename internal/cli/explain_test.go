package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/target"
)

// slowQuery is the demo's /demo/timing with every 50th request it gets made slow for 2 s
// (far above this shared machine's stalls) and Server-Timing on every response.
const slowQuery = "/demo/timing?every=50&slow=2s"

func demoTarget(t *testing.T) *target.Server {
	t.Helper()
	srv, err := target.Start(target.Config{Demo: true, Log: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// slowestTraces reads run.json's last step and returns the trace ids of its n slowest.
func slowestTraces(t *testing.T, path string, n int) []string {
	t.Helper()
	r, err := result.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	x := r.Last().Exemplars
	if x == nil || len(x.Slowest) < n {
		t.Fatalf("%s keeps %+v, want at least %d slowest requests", path, x, n)
	}
	var ids []string
	for _, e := range x.Slowest[:n] {
		ids = append(ids, e.Trace.String())
	}
	slices.Sort(ids)
	return ids
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestTraceparentRunCLI: `run --traceparent --slowest 3 --latency` prints the Server-Timing
// lines and the slowest requests, and run.json keeps exactly the requests the target made
// slow, by the trace ids it saw.
func TestTraceparentRunCLI(t *testing.T) {
	srv := demoTarget(t)
	out := filepath.Join(t.TempDir(), "run.json")
	code, stdout, stderr := runCLI(t, "run", "--traceparent", "--slowest", "3", "--latency", "-t1", "-c3", "-n", "150", "-T10s",
		"--no-history", "-o", out, srv.URL()+slowQuery)
	if code != ExitOK {
		t.Fatalf("run exited %d\n%s\n%s", code, stdout, stderr)
	}
	slow := srv.SlowTraces()
	if len(slow) != 3 {
		t.Fatalf("the target made %d requests slow, want 3", len(slow))
	}
	for _, want := range append([]string{"  Server-Timing db: p50 2.00ms", "  Server-Timing app: p50 500.00us", "(150 responses)\n",
		"  Slowest 3 requests (of 150 responses):\n", "  One request per latency band:\n    p50"}, slow...) {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if got := slowestTraces(t, out, 3); !slices.Equal(got, sorted(slow)) {
		t.Errorf("run.json's slowest trace ids %q, the target's slow ones %q", got, sorted(slow))
	}
	if code, _, stderr := runCLI(t, "run", "--slowest", "0", "-n", "1", srv.URL()); code != ExitUsage || !strings.Contains(stderr, "--slowest must be at least 1") {
		t.Errorf("run --slowest 0 = %d, %q; want usage error", code, stderr)
	}
}

// TestTraceparentScriptWinsCLI: a Lua script that sets its own traceparent keeps it with
// --traceparent, and the slowest list shows the script's id.
func TestTraceparentScriptWinsCLI(t *testing.T) {
	srv := demoTarget(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "own.lua")
	const own = "0af7651916cd43dd8448eb211c80319c"
	if err := os.WriteFile(script, []byte(`wrk.headers["traceparent"] = "00-`+own+`-b7ad6b7169203331-01"`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run.json")
	code, stdout, stderr := runCLI(t, "run", "--traceparent", "-t1", "-c2", "-n", "60", "-T10s", "--no-history", "-o", out, "-s", script, srv.URL()+slowQuery)
	if code != ExitOK {
		t.Fatalf("run exited %d\n%s\n%s", code, stdout, stderr)
	}
	if slow := srv.SlowTraces(); len(slow) != 2 || slow[0] != own || slow[1] != own {
		t.Errorf("the target saw %q on its slow requests, want the script's own id", slow)
	}
	if got := slowestTraces(t, out, 2); got[0] != own || got[1] != own {
		t.Errorf("run.json's slowest trace ids %q, want the script's", got)
	}
}

// TestTraceparentMergeAndScaleOutCLI: the slowest requests of two generators' runs merged
// with `apiperf merge`, and of `run --workers 2`, are exactly those the target made slow.
func TestTraceparentMergeAndScaleOutCLI(t *testing.T) {
	srv := demoTarget(t)
	dir := t.TempDir()
	var runs []string
	for _, name := range []string{"a", "b"} {
		out := filepath.Join(dir, name+".json")
		code, stdout, stderr := runCLI(t, "run", "--traceparent", "-t1", "-c2", "-n", "100", "-T10s", "--no-history", "-o", out, srv.URL()+slowQuery)
		if code != ExitOK {
			t.Fatalf("run %s exited %d\n%s\n%s", name, code, stdout, stderr)
		}
		runs = append(runs, out)
	}
	merged := filepath.Join(dir, "merged", "run.json")
	if code, stdout, stderr := runCLI(t, "merge", "-o", merged, runs[0], runs[1]); code != ExitOK {
		t.Fatalf("merge exited %d\n%s\n%s", code, stdout, stderr)
	}
	slow := srv.SlowTraces()
	if len(slow) != 4 {
		t.Fatalf("the target made %d requests slow, want 4", len(slow))
	}
	if got := slowestTraces(t, merged, 4); !slices.Equal(got, sorted(slow)) {
		t.Errorf("merged run's slowest trace ids %q, the target's slow ones %q", got, sorted(slow))
	}

	// Scale-out: a coordinator and two workers in this process.
	scaled := demoTarget(t)
	t.Setenv(tokenEnv, "cli-test-token-0123456789")
	addr := freeAddr(t)
	wg := joinWorkers(addr, 2)
	out := filepath.Join(dir, "scaled.json")
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"run", "--workers", "2", "--join-addr", addr, "--join-timeout", "20s", "--traceparent",
		"-n", "200", "-c", "4", "-T10s", "--no-history", "-o", out, scaled.URL() + slowQuery}, &stdout, &stderr)
	wg.Wait()
	if code != ExitOK {
		t.Fatalf("run --workers 2 exited %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	slow = scaled.SlowTraces()
	if len(slow) != 4 {
		t.Fatalf("the target made %d requests slow, want 4", len(slow))
	}
	if got := slowestTraces(t, out, 4); !slices.Equal(got, sorted(slow)) {
		t.Errorf("scaled-out run's slowest trace ids %q, the target's slow ones %q", got, sorted(slow))
	}
}

// TestTraceparentMixCLI: in a scenario mix (one endpoint rendered from a template each time)
// the slowest requests are the slow endpoint's, named, with the trace ids the target saw.
func TestTraceparentMixCLI(t *testing.T) {
	srv := demoTarget(t)
	dir := t.TempDir()
	mix := filepath.Join(dir, "mix.yaml")
	if err := os.WriteFile(mix, []byte(`endpoints:
  - name: timed
    path: `+slowQuery+`&n={{counter}}
    weight: 1
  - name: health
    path: /healthz
    weight: 1
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run.json")
	code, stdout, stderr := runCLI(t, "run", "--traceparent", "-t1", "-c2", "-n", "200", "-T10s", "--no-history", "-o", out, "--scenario", mix, srv.URL())
	if code != ExitOK {
		t.Fatalf("run exited %d\n%s\n%s", code, stdout, stderr)
	}
	slow := srv.SlowTraces()
	if len(slow) != 2 {
		t.Fatalf("the target made %d requests slow, want 2 (100 to the timed endpoint)", len(slow))
	}
	if got := slowestTraces(t, out, 2); !slices.Equal(got, sorted(slow)) {
		t.Errorf("run.json's slowest trace ids %q, the target's slow ones %q", got, sorted(slow))
	}
	r, err := result.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range r.Last().Exemplars.Slowest[:2] {
		if e.Endpoint != "timed" {
			t.Errorf("slow request %s is on endpoint %q, want timed", e.Trace, e.Endpoint)
		}
	}
}
