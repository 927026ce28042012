package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/internal/testenv"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/target"
)

func startGRPC(t *testing.T, cfg target.GRPCConfig) *target.GRPCServer {
	t.Helper()
	cfg.Addr = "127.0.0.1:0"
	g, err := target.StartGRPC(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// TestRunGRPC: run against a grpc-go server (reflection on, h2c and TLS) counts every call by
// grpc-status exactly, and --expect takes gRPC code names.
func TestRunGRPC(t *testing.T) {
	for _, tls := range []bool{false, true} {
		g := startGRPC(t, target.GRPCConfig{TLS: tls})
		code, out, errOut := runCLI(t, "run", "--no-history", "-k", "-c", "4", "--streams", "4", "-n", "500",
			"--body", `{"name":"x","delay_ms":2,"fail_every":10}`, g.URL("Echo"))
		for _, want := range []string{"500 requests in", "gRPC status: OK=450, UNAVAILABLE=50", "Errors: connect 0, read 0, write 0, timeout 0, status 50, protocol 0",
			"Success rate: 90.00% (450 of 500 attempts)", "gRPC: /apiperf.demo.Demo/Echo: 450 response messages"} {
			if !strings.Contains(out, want) || code != ExitOK {
				t.Errorf("run %s: exit %d, output lacks %q:\n%s\n%s", g.URL("Echo"), code, want, out, errOut)
			}
		}
		if !strings.Contains(errOut, "gRPC unary apiperf.demo.Demo/Echo (apiperf.demo.Ask") {
			t.Errorf("stderr %q does not say what is called", errOut)
		}
	}
	g := startGRPC(t, target.GRPCConfig{})
	code, out, errOut := runCLI(t, "run", "--no-history", "--json", "-c", "2", "-n", "100", "--expect", "OK,UNAVAILABLE",
		"--body", `{"fail_every":10}`, g.URL("Echo"))
	var doc struct {
		Steps []struct {
			Successes int64                    `json:"successes"`
			Status    map[string]int64         `json:"status"`
			GRPC      struct{ Messages int64 } `json:"grpc"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != ExitOK || len(doc.Steps) != 1 {
		t.Fatalf("run --json: exit %d, %v:\n%s\n%s", code, err, out, errOut)
	}
	if s := doc.Steps[0]; s.Successes != 100 || s.Status["0"] != 90 || s.Status["14"] != 10 || s.GRPC.Messages != 90 {
		t.Errorf("run.json step %+v; want 100 successes (--expect OK,UNAVAILABLE), status 0=90 14=10, 90 messages", s)
	}
}

// TestRunGRPCBadInput: each mistake is one line naming it, exit 2, and no call reaches the server.
func TestRunGRPCBadInput(t *testing.T) {
	g := startGRPC(t, target.GRPCConfig{})
	dir := t.TempDir()
	broken := filepath.Join(dir, "broken.proto")
	if err := os.WriteFile(broken, []byte("syntax = \"proto3\";\npackage p;\nservice S { rpc M(A) returns (A) }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{g.URL("Nope")}, "gRPC service apiperf.demo.Demo has no method Nope"},
		{[]string{"grpc://" + g.Addr() + "/apiperf.demo.Nope/Echo"}, "unknown gRPC service apiperf.demo.Nope"},
		{[]string{"--body", `{"name":"x","delay":2}`, g.URL("Echo")}, `unknown field "delay"`},
		{[]string{"--proto", broken, g.URL("Echo")}, "broken.proto:3:"},
		{[]string{g.URL("Chat")}, "Chat is a bidirectional-streaming method"},
		{[]string{"--expect", "FINE", g.URL("Echo")}, `wants gRPC status codes like OK,NOT_FOUND or 0,5 (got "FINE")`},
		{[]string{"-s", "x.lua", g.URL("Echo")}, "not --script or --scenario"},
		{[]string{"--proto", broken, "http://127.0.0.1:1/"}, "--proto and --import-path are for grpc://"},
		{[]string{"grpc://" + g.Addr() + "/apiperf.demo.Demo"}, "path is /package.Service/Method"},
	} {
		args := append([]string{"run", "--no-history", "-n", "10"}, c.args...)
		code, _, errOut := runCLI(t, args...)
		if code != ExitUsage || !strings.Contains(errOut, c.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line naming %q", c.args, code, errOut, c.want)
		}
	}
	if echo, watch := g.Calls(); echo+watch != 0 {
		t.Errorf("bad input sent %d calls to the server, want none", echo+watch)
	}
}

// TestRunGRPCUnreachable: a server that cannot be asked for its schema is the target's
// failure (exit 1), not bad input.
func TestRunGRPCUnreachable(t *testing.T) {
	code, _, errOut := runCLI(t, "run", "--no-history", "-n", "10", "grpc://127.0.0.1:1/p.S/M")
	if code != ExitFailed || !strings.Contains(errOut, "127.0.0.1:1") {
		t.Errorf("unreachable gRPC server: exit %d, stderr %q; want exit 1 naming the address", code, errOut)
	}
}

// TestRunGRPCStreamObjective: a server stream is summarized as streams, and an objective on
// its time to first message fails the run (exit 1) naming the term.
func TestRunGRPCStreamObjective(t *testing.T) {
	g := startGRPC(t, target.GRPCConfig{})
	body := `{"count":4,"delay_ms":20,"gap_ms":2}`
	code, out, errOut := runCLI(t, "run", "--no-history", "-c", "2", "--streams", "2", "-n", "20", "--body", body,
		"--objective", "first_p99<=1ms", g.URL("Watch"))
	if code != ExitFailed || !strings.Contains(errOut, "objective not met: first_p99<=1ms") {
		t.Errorf("--objective first_p99<=1ms against a 20ms first message: exit %d, stderr %q; want exit 1 naming the term", code, errOut)
	}
	for _, want := range []string{"Streams (gRPC server streams): 20 complete, 80 messages, 4.0 per stream (min 4, max 4)", "Time to first message: p50", "Gap between messages: p50"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	code, _, errOut = runCLI(t, "run", "--no-history", "-c", "2", "-n", "20", "--body", body, "--objective", "first_p99<=1s", g.URL("Watch"))
	if code != ExitOK {
		t.Errorf("--objective first_p99<=1s: exit %d, stderr %q; want 0", code, errOut)
	}
}

// TestRunGRPCMetadata: -H headers and --traceparent reach the server as gRPC metadata.
func TestRunGRPCMetadata(t *testing.T) {
	g := startGRPC(t, target.GRPCConfig{})
	code, _, errOut := runCLI(t, "run", "--no-history", "-c", "1", "-n", "5", "-H", "X-Tenant: t1", "--traceparent", g.URL("Echo"))
	md := g.LastMetadata()
	if code != ExitOK || len(md["x-tenant"]) != 1 || md["x-tenant"][0] != "t1" || len(md["traceparent"]) != 1 || len(md["traceparent"][0]) != 55 {
		t.Errorf("run -H 'X-Tenant: t1' --traceparent: exit %d (%s), the server saw metadata %v; want x-tenant t1 and a traceparent", code, errOut, md)
	}
}

// TestSweepGRPCStreams: sweep takes a gRPC target through the same source, and its table
// shows the levels' stream columns.
func TestSweepGRPCStreams(t *testing.T) {
	g := startGRPC(t, target.GRPCConfig{})
	code, out, errOut := runCLI(t, "sweep", "-q", "--no-history", "--dir", t.TempDir(), "--levels", "1,2", "-d", "300ms", "--warmup", "100ms",
		"--body", `{"count":3,"delay_ms":5,"gap_ms":2}`, g.URL("Watch"))
	if code != ExitOK || !strings.Contains(out, "1st p99") || !strings.Contains(out, "gap p99") || !strings.Contains(out, "c=2 ") {
		t.Errorf("sweep of a gRPC server stream: exit %d, stdout:\n%s\nstderr:\n%s\nwant both levels with stream columns", code, out, errOut)
	}
}

// TestClusterGRPC: `run --workers 2` of a gRPC target: the coordinator encodes the call once
// from the server's reflection and the workers, who have no schema, send it; the merged
// result counts every call by grpc-status exactly, and a server stream's messages too.
func TestClusterGRPC(t *testing.T) {
	g := startGRPC(t, target.GRPCConfig{})
	t.Setenv(tokenEnv, "cli-test-token-0123456789")
	for _, c := range []struct {
		method, body string
		want         []string
	}{
		{"Echo", `{"name":"x","fail_every":10}`, []string{"400 requests in", "gRPC status: OK=360, UNAVAILABLE=40", "Workers: 2"}},
		{"Watch", `{"count":3,"gap_ms":1}`, []string{"400 requests in", "Streams (gRPC server streams): 400 complete, 1200 messages, 3.0 per stream (min 3, max 3)"}},
	} {
		addr := freeAddr(t)
		wg := joinWorkers(addr, 2)
		code, out, errOut := runCLI(t, "run", "--no-history", "--workers", "2", "--join-addr", addr, "--join-timeout", "20s",
			"-c", "4", "-n", "400", "--body", c.body, g.URL(c.method))
		wg.Wait()
		for _, want := range c.want {
			if code != ExitOK || !strings.Contains(out, want) {
				t.Errorf("run --workers 2 %s: exit %d, output lacks %q:\n%s\n%s", c.method, code, want, out, errOut)
			}
		}
	}
	if echo, watch := g.Calls(); echo != 400 || watch != 400 {
		t.Errorf("the server answered %d Echo and %d Watch calls, want 400 each", echo, watch)
	}
}

// TestRunGRPCSlowestTraces: `run --traceparent --slowest 3 --latency` of a gRPC method lists
// the slowest calls with their trace ids, and run.json keeps exactly the calls the server made
// slow, by the trace ids it saw in their metadata.
func TestRunGRPCSlowestTraces(t *testing.T) {
	g := startGRPC(t, target.GRPCConfig{})
	out := filepath.Join(t.TempDir(), "run.json")
	code, stdout, stderr := runCLI(t, "run", "--traceparent", "--slowest", "3", "--latency", "-t1", "-c3", "-n", "150", "-T10s",
		"--no-history", "-o", out, "--body", `{"delay_ms":1,"slow_every":50,"slow_ms":500}`, g.URL("Echo"))
	if code != ExitOK {
		t.Fatalf("run exited %d\n%s\n%s", code, stdout, stderr)
	}
	slow := g.SlowTraces()
	if len(slow) != 3 {
		t.Fatalf("the server made %d calls slow (%q), want 3", len(slow), slow)
	}
	for _, want := range append([]string{"  Slowest 3 requests (of 150 responses):\n", "  One request per latency band:\n    p50"}, slow...) {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if got := slowestTraces(t, out, 3); !slices.Equal(got, sorted(slow)) {
		t.Errorf("run.json's slowest trace ids %q, the server's slow calls' %q", got, sorted(slow))
	}
}

// TestTimingVerdictGRPC (make timing): the verdict and the captures on a gRPC target. A
// grpc-go server (`apiperf serve --grpc`, another process) serves its pprof and metrics over
// HTTP on a second port; a sweep of its 1 ms method at 2 and 8 connections finds the target's
// process by the gRPC port it listens on, captures its CPU, heap and goroutine profiles and
// metrics, and finds no bottleneck.
func TestTimingVerdictGRPC(t *testing.T) {
	testenv.Timing(t) // the verdict reads CPU shares: it needs the serial pass, without -race
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(asApiperfEnv, "1")
	grpcAddr := freeAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := target.Spawn(ctx, exe, "--grpc", grpcAddr, "--pprof", "--metrics")
	if err != nil {
		t.Fatalf("spawning apiperf serve --grpc: %v", err)
	}
	defer p.Stop()
	dir := t.TempDir()
	args := []string{"sweep", "-d", "2s", "--warmup", "300ms", "--no-stop", "--no-history", "--levels", "2,8",
		"--pprof", p.URL() + "/debug/pprof", "--metrics", p.URL() + "/metrics", "--profile-levels", "last",
		"--dir", dir, "--name", "grpc", "--body", `{"delay_ms":1}`, "grpc://" + grpcAddr + "/apiperf.demo.Demo/Echo"}
	code, stdout, stderr := runCLI(t, args...)
	if code != ExitOK {
		t.Fatalf("apiperf %s = %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, stdout, stderr)
	}
	found := "target process " + strconv.Itoa(p.Pid()) + " (listening on " + grpcAddr + ")"
	if !strings.Contains(stderr, found) {
		t.Errorf("stderr does not say %q:\n%s", found, stderr)
	}
	if !strings.Contains(stdout, "verdict: no bottleneck found at the loads measured") || !strings.Contains(stdout, "Target CPU profile at c=8") {
		t.Errorf("sweep of a 1ms gRPC method at c=2,8: stdout lacks the verdict \"no bottleneck found\" or the c=8 CPU profile:\n%s\nstderr:\n%s", stdout, stderr)
	}
	r, err := result.Load(filepath.Join(dir, "grpc"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict == nil || len(r.Verdict.Claims) != 0 {
		t.Fatalf("run.json's verdict %+v; want one with no claim:\n%s", r.Verdict, verdictDump(r.Verdict))
	}
	if r.Target == nil || r.Target.PIDSource != "listening on "+grpcAddr {
		t.Fatalf("run.json target %+v; want the process found listening on %s", r.Target, grpcAddr)
	}
	st := r.Target.Step("c=8", 0)
	if st == nil || st.Profiles == nil || st.Process == nil || st.Summary == nil || st.Summary.Goroutines == nil {
		t.Fatalf("c=8's capture %+v; want its profiles' analysis, the process's CPU and the metrics' goroutines", st)
	}
	var kinds []string
	for _, f := range st.Files {
		if _, err := os.Stat(filepath.Join(dir, "grpc", f)); err != nil {
			t.Errorf("saved profile %s: %v", f, err)
		}
		kinds = append(kinds, filepath.Base(f))
	}
	for _, want := range []string{"cpu", "heap", "goroutine"} {
		if !slices.ContainsFunc(kinds, func(k string) bool { return strings.Contains(k, want) }) {
			t.Errorf("c=8's saved profiles %q lack the %s profile", kinds, want)
		}
	}
	t.Logf("%s", stdout[strings.Index(stdout, "verdict: "):])
}

// TestServeGRPCObserved: `serve --grpc ADDR --pprof --metrics` serves the gRPC target and,
// first on --addr, its pprof and metrics over HTTP, both from one process.
func TestServeGRPCObserved(t *testing.T) {
	grpcAddr := freeAddr(t)
	url := spawnServe(t, "--grpc", grpcAddr, "--pprof", "--metrics")
	getOK(t, url, "/debug/pprof/", "/metrics")
	code, out, errOut := runCLI(t, "run", "--no-history", "-c", "1", "-n", "5", "grpc://"+grpcAddr+"/apiperf.demo.Demo/Echo")
	if code != ExitOK || !strings.Contains(out, "gRPC status: OK=5") {
		t.Errorf("run of the spawned gRPC target: exit %d, output:\n%s\n%s", code, out, errOut)
	}
}
