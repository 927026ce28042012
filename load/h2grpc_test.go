package load

import (
	"context"
	"testing"
	"time"

	"github.com/apiperf/apiperf/grpcsource"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
	"github.com/apiperf/apiperf/target"
)

// grpcTarget starts the built-in gRPC target (a real grpc-go server with reflection).
func grpcTarget(t testing.TB) *target.GRPCServer {
	t.Helper()
	g, err := target.StartGRPC(target.GRPCConfig{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// runGRPC calls url with body over the engine's HTTP/2 loop.
func runGRPC(t testing.TB, url, body string, cfg Config) *measure.Step {
	t.Helper()
	tg, err := scenario.ParseTarget(url)
	if err != nil {
		t.Fatal(err)
	}
	src, err := grpcsource.New(context.Background(), grpcsource.Options{Target: tg, Body: []byte(body)})
	if err != nil {
		t.Fatalf("grpcsource.New(%s): %v", url, err)
	}
	cfg.HTTP2 = true
	if cfg.Threads == 0 {
		cfg.Threads = 2
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = measure.Duration(5 * time.Second)
	}
	ok := measure.StatusSet{}
	ok.AddRange(0, 0)
	s, err := Run(context.Background(), cfg, src, tg, append([]Option{WithExpected(ok)}, h2TestOpts...)...)
	if err != nil {
		t.Fatalf("Run(%s): %v", url, err)
	}
	return s
}

// TestGRPCUnaryCountsByStatus: every call of a method that fails one call in ten is counted
// by its grpc-status (read from the trailers, and from the headers of the trailers-only
// failures), exactly; the unary latency is near the method's 2 ms (loosely: a busy machine).
func TestGRPCUnaryCountsByStatus(t *testing.T) {
	g := grpcTarget(t)
	s := runGRPC(t, g.URL("Echo"), `{"name":"x","delay_ms":2,"fail_every":10}`,
		Config{Connections: 4, Streams: 4, Requests: 1000})
	if s.Attempts != 1000 || s.Requests != 1000 {
		t.Fatalf("attempts %d, responses %d; want 1000 of each (errors %+v)", s.Attempts, s.Requests, s.Errors)
	}
	if s.Status[0] != 900 || s.Status[14] != 100 || len(s.Status) != 2 {
		t.Errorf("status counts %v; want 0 (OK)=900, 14 (UNAVAILABLE)=100", s.Status)
	}
	if s.Successes != 900 || s.Errors.Status != 100 {
		t.Errorf("successes %d, status errors %d; want 900 and 100", s.Successes, s.Errors.Status)
	}
	if echo, _ := g.Calls(); echo != 1000 {
		t.Errorf("the server saw %d calls, want 1000", echo)
	}
	if s.GRPC == nil || s.GRPC.Method != "/apiperf.demo.Demo/Echo" || s.GRPC.Messages != 900 {
		t.Fatalf("GRPC record %+v; want 900 response messages of /apiperf.demo.Demo/Echo", s.GRPC)
	}
	if want := int64(900 * len("\n\x07hello x\x10")); s.GRPC.MessageBytes < want {
		t.Errorf("message bytes %d, want at least %d", s.GRPC.MessageBytes, want)
	}
	if p50 := s.Latency.Percentile(50); p50 < 2*time.Millisecond || p50 > 200*time.Millisecond {
		t.Errorf("p50 %v; want 2 ms or a little more", p50)
	}
}

// TestGRPCServerStreamMessages: a server stream's messages are all counted.
func TestGRPCServerStreamMessages(t *testing.T) {
	g := grpcTarget(t)
	s := runGRPC(t, g.URL("Watch"), `{"count":5,"gap_ms":1}`, Config{Connections: 2, Streams: 2, Requests: 40})
	if s.Requests != 40 || s.Status[0] != 40 {
		t.Fatalf("responses %d, status %v; want 40 OK (errors %+v)", s.Requests, s.Status, s.Errors)
	}
	if s.GRPC.Messages != 200 {
		t.Errorf("messages %d, want 40 streams x 5", s.GRPC.Messages)
	}
}

// TestGRPCOpenLoop: the open loop paces gRPC calls like HTTP requests.
func TestGRPCOpenLoop(t *testing.T) {
	g := grpcTarget(t)
	s := runGRPC(t, g.URL("Echo"), `{"delay_ms":1}`, Config{Connections: 2, Streams: 8, Rate: 200, Requests: 100})
	if s.Requests != 100 || s.Status[0] != 100 || s.Uncorrected == nil {
		t.Fatalf("responses %d, status %v, uncorrected %v; want 100 OK with both views", s.Requests, s.Status, s.Uncorrected != nil)
	}
}

// TestGRPCStreamBacklogCorrected: in open loop at a rate above what one stream at a time can
// start, the time to first message grows with the backlog when counted from when each stream
// was due (corrected), while from its actual send (uncorrected) it stays near the server's
// first-message delay.
func TestGRPCStreamBacklogCorrected(t *testing.T) {
	g := grpcTarget(t)
	s := runGRPC(t, g.URL("Watch"), `{"count":2,"delay_ms":20,"gap_ms":5}`,
		Config{Connections: 1, MaxConnections: 1, Streams: 1, Rate: 100, Requests: 30})
	st := s.Streams
	if st == nil || st.FirstUncorrected == nil || st.Streams != s.Requests || s.Requests == 0 {
		t.Fatalf("streams %+v of %d responses; want every stream timed, with an uncorrected view", st, s.Requests)
	}
	c, u := st.First.Percentile(90), st.FirstUncorrected.Percentile(90)
	if u < 20*time.Millisecond || c < 3*u {
		t.Errorf("time to first message p90: corrected %v, uncorrected %v; want the corrected one several times the uncorrected (>= 20ms)", c, u)
	}
}
