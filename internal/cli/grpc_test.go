package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
