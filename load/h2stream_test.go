package load

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
)

// checkStreams asserts a step's streams: counts exactly, times loosely (a busy machine).
func checkStreams(t *testing.T, s *measure.Step, kind string, streams, per int64, first, gap time.Duration) {
	t.Helper()
	checkStreamCounts(t, s, kind, streams, per)
	st := s.Streams
	if p := st.First.Percentile(50); p < first || p > first+time.Second {
		t.Errorf("time to first message p50 %v; want %v or a little more", p, first)
	}
	if p := st.Gap.Percentile(50); p < gap*8/10 || p > gap+time.Second {
		t.Errorf("gap p50 %v; want about %v", p, gap)
	}
	if s.Latency.Percentile(50) < first+time.Duration(per-1)*gap*8/10 {
		t.Errorf("stream duration p50 %v is shorter than its messages' schedule", s.Latency.Percentile(50))
	}
}

// checkStreamCounts asserts a step's streams, counts only: streams streams of kind, per
// messages each, every first message and every gap timed.
func checkStreamCounts(t *testing.T, s *measure.Step, kind string, streams, per int64) {
	t.Helper()
	st := s.Streams
	if st == nil {
		t.Fatalf("no streams recorded (responses %d, errors %+v)", s.Requests, s.Errors)
	}
	if st.Kind != kind || st.Streams != streams || st.Messages != streams*per || st.MinMessages != per || st.MaxMessages != per || st.Empty != 0 {
		t.Errorf("streams %+v; want %d %s streams of %d messages each", st, streams, kind, per)
	}
	if n := st.First.Count(); n != streams {
		t.Errorf("first-message samples %d, want %d", n, streams)
	}
	if n := st.Gap.Count(); n != streams*(per-1) {
		t.Errorf("gap samples %d, want %d", n, streams*(per-1))
	}
}

// TestGRPCServerStreamTimed: a server stream's first message, the gaps between its messages
// and its length are measured stream by stream.
func TestGRPCServerStreamTimed(t *testing.T) {
	g := grpcTarget(t)
	s := runGRPC(t, g.URL("Watch"), `{"count":5,"delay_ms":30,"gap_ms":10}`, Config{Connections: 2, Streams: 4, Requests: 40})
	if s.Requests != 40 || s.Status[0] != 40 {
		t.Fatalf("responses %d, status %v; want 40 OK", s.Requests, s.Status)
	}
	checkStreams(t, s, "grpc", 40, 5, 30*time.Millisecond, 10*time.Millisecond)
	if s.Streams.FirstUncorrected != nil {
		t.Error("a closed loop has no uncorrected view")
	}
}

// TestGRPCUnaryNotStreams: a unary call is not measured as a stream.
func TestGRPCUnaryNotStreams(t *testing.T) {
	g := grpcTarget(t)
	if s := runGRPC(t, g.URL("Echo"), `{}`, Config{Connections: 1, Requests: 10}); s.Streams != nil {
		t.Errorf("unary calls recorded as streams: %+v", s.Streams)
	}
}

// sseHandler answers with n events, the first first after the request came, then one every
// gap (on that schedule: a late write does not push the others back); comments between them
// are not events. Its lines end in CRLF, its comments' in LF.
func sseHandler(n int, first, gap time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for i := range n {
			select {
			case <-time.After(time.Until(start.Add(first + time.Duration(i)*gap))):
			case <-r.Context().Done():
				return
			}
			fmt.Fprintf(w, ": keep-alive\n\nid: %d\r\ndata: token %d\r\ndata: more\r\n\r\n", i, i)
			rc.Flush()
		}
	}
}

// TestSSEOverHTTP2Timed: text/event-stream responses over HTTP/2 are measured as streams of
// events (CRLF lines, comments not counted).
func TestSSEOverHTTP2Timed(t *testing.T) {
	srv, _ := goH2Server(t, false, sseHandler(6, 30*time.Millisecond, 10*time.Millisecond))
	s := mustRunH2(t, srv.URL+"/events", Config{Connections: 2, Streams: 3, Requests: 30})
	checkStreams(t, s, "sse", 30, 6, 30*time.Millisecond, 10*time.Millisecond)
}

// TestSSEOpenLoopCorrected: in open loop, time to first event is from when the stream was
// due (corrected) and, uncorrected, from its actual send; the corrected view is never shorter.
func TestSSEOpenLoopCorrected(t *testing.T) {
	srv, _ := goH2Server(t, false, sseHandler(3, 20*time.Millisecond, 5*time.Millisecond))
	s := mustRunH2(t, srv.URL+"/events", Config{Connections: 1, Streams: 2, Rate: 100, MaxConnections: 1, Requests: 40})
	st := s.Streams
	if st == nil || st.FirstUncorrected == nil || st.Streams != s.Requests || st.Messages != 3*s.Requests {
		t.Fatalf("streams %+v over %d responses; want 3 events each, with an uncorrected view", st, s.Requests)
	}
	if c, u := st.First.Max(), st.FirstUncorrected.Max(); c < u {
		t.Errorf("corrected max time to first event %v < uncorrected %v", c, u)
	}
}
