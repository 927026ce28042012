package load

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/grpcsource"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
	"github.com/apiperf/apiperf/target"
)

const grpcHelperEnv = "APIPERF_TEST_GRPC_SERVER"

// TestGRPCHelperServer is not a test: re-executed with grpcHelperEnv set, the test binary
// serves the built-in gRPC target in its own process (so its allocations are not counted
// here) until its stdin closes.
func TestGRPCHelperServer(t *testing.T) {
	if os.Getenv(grpcHelperEnv) == "" {
		t.Skip("the gRPC server process of TestGRPCNoAllocationPerCall")
	}
	g, err := target.StartGRPC(target.GRPCConfig{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("addr", g.Addr())
	bufio.NewReader(os.Stdin).ReadString('\n')
	g.Close()
}

// TestGRPCNoAllocationPerCall: in steady state a unary call costs the engine no allocation
// (the request is encoded once; the server's PING and WINDOW_UPDATE frames, which grpc-go
// sends with every response, are read without the framer's allocation).
func TestGRPCNoAllocationPerCall(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestGRPCHelperServer$")
	cmd.Env = append(os.Environ(), grpcHelperEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "addr ")
	if err != nil || !ok {
		t.Fatalf("the server process said %q, %v; want its address", line, err)
	}
	tg, _ := scenario.ParseTarget("grpc://" + addr + "/apiperf.demo.Demo/Echo")
	src, err := grpcsource.New(context.Background(), grpcsource.Options{Target: tg, Body: []byte(`{"name":"x"}`)})
	if err != nil {
		t.Fatal(err)
	}
	ok0 := measure.StatusSet{}
	ok0.AddRange(0, 0)
	// Closed loop, and open loop (the HTTP/2 loops' timers: a due request's deadline per call).
	for _, rate := range []float64{0, 20000} {
		mallocs := func(n int64) uint64 {
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			cfg := Config{Connections: 4, Streams: 4, Threads: 2, Requests: n, Rate: rate, Timeout: measure.Duration(10 * time.Second), HTTP2: true}
			if rate > 0 {
				cfg.MaxConnections = cfg.Connections // a slow machine's lag opens no connection (its buffers are no call's cost)
			}
			s, err := Run(context.Background(), cfg, src, tg, WithExpected(ok0))
			runtime.ReadMemStats(&m1)
			if err != nil || s.Successes != n {
				t.Fatalf("Run(-n %d, -R %g) = %d successes, %v (errors %+v)", n, rate, s.Successes, err, s.Errors)
			}
			return m1.Mallocs - m0.Mallocs
		}
		mallocs(500) // connections, buffers and recorders of a run are not the calls' cost
		a, b := mallocs(2000), mallocs(6000)
		t.Logf("-R %g: -n 2000: %d allocations, -n 6000: %d", rate, a, b)
		if per := (float64(b) - float64(a)) / 4000; per > 0.1 {
			t.Errorf("-R %g: -n 2000: %d allocations, -n 6000: %d: %.2f per call; want none in steady state", rate, a, b, per)
		}
	}
}
