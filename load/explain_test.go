package load

import (
	"context"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
	"github.com/apiperf/apiperf/target"
)

// slowPath is /demo/timing with every 50th request made slow for slowFor: far longer than a
// stall of this shared machine, so the slow requests are the slowest whatever else happens.
const (
	slowFor  = 3 * time.Second
	slowPath = "/demo/timing?every=50&slow=3s"
)

// TestSlowestAreTheSlowRequests loads the demo's /demo/timing, which makes every 50th
// request it gets slow and says so in Server-Timing, with --traceparent on every I/O path
// (closed and open loop, HTTP/1.1 and HTTP/2): the slowest requests apiperf keeps are exactly
// those the target made slow, by the trace ids it saw, and the Server-Timing percentiles are
// what it sent.
func TestSlowestAreTheSlowRequests(t *testing.T) {
	t.Parallel()
	paths := []struct {
		name string
		mode ioMode
		cfg  Config
	}{
		{"evloop/closed", ioEvloop, Config{}},
		{"uring/closed", ioUring, Config{}},
		{"goroutines/closed", ioGoroutines, Config{}},
		{"evloop/open", ioEvloop, Config{Rate: 1000}},
		{"goroutines/open", ioGoroutines, Config{Rate: 1000}},
		{"http2/closed", ioAuto, Config{HTTP2: true, Streams: 2}},
		{"http2/open", ioAuto, Config{HTTP2: true, Streams: 16, Rate: 1000}}, // streams to spare: a slow one holds up no other
	}
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel() // most of the time is the slow requests' sleep
			srv := startTarget(t, target.Config{Demo: true, Log: io.Discard})
			cfg := p.cfg
			cfg.Requests, cfg.Traceparent, cfg.Slowest, cfg.Connections = 250, true, 20, 4
			cfg.Timeout = measure.Duration(10 * time.Second)
			s := run(t, p.mode, context.Background(), srv.URL()+slowPath, cfg)
			slow := srv.SlowTraces()
			if s.Requests != 250 || len(slow) != 5 {
				t.Fatalf("%d responses, the target made %d slow; want 250 and 5", s.Requests, len(slow))
			}
			x := s.Exemplars
			var got []string
			for _, e := range x.Slowest[:len(slow)] {
				got = append(got, e.Trace.String())
				if e.Latency.Duration() < slowFor || e.Status != 200 {
					t.Errorf("slow request %s: latency %v status %d, want at least %v and 200", e.Trace, e.Latency, e.Status, slowFor)
				}
				if m, ok := e.Largest(); !ok || m.Name != "db" || m.Dur.Duration() != slowFor {
					t.Errorf("slow request %s: its Server-Timing %+v, want db %v", e.Trace, e.Timing, slowFor)
				}
			}
			want := slices.Clone(slow)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) || slices.Contains(want, "") {
				t.Errorf("the %d slowest requests have trace ids %q; the target made %q slow", len(slow), got, want)
			}
			if next := x.Slowest[len(slow)]; next.Latency.Duration() >= slowFor {
				t.Errorf("request %d of the slowest took %v: only %d were made slow", len(slow)+1, next.Latency, len(slow))
			}
			if len(x.Bands) != len(measure.Bands) || x.Bands[0].Exemplar.Trace.IsZero() {
				t.Errorf("bands = %+v, want %d with trace ids", x.Bands, len(measure.Bands))
			}
			checkTiming(t, s, len(slow))
		})
	}
}

// checkTiming checks the Server-Timing of a /demo/timing step: every response sent db and
// app; db took TimingDB except in the slow ones, which took slowFor; app TimingApp.
func checkTiming(t *testing.T, s *measure.Step, slow int) {
	t.Helper()
	st := s.ServerTiming
	db, app := st.Metric("db"), st.Metric("app")
	if db == nil || app == nil || db.Responses != s.Requests || app.Responses != s.Requests || st.Malformed != 0 {
		t.Fatalf("Server-Timing %+v: want db and app in all %d responses, none malformed", st, s.Requests)
	}
	near := func(got, want time.Duration) bool { return got >= want && float64(got) <= float64(want)*1.001 } // HDR precision
	if p50, mx := db.Histogram.Percentile(50), db.Histogram.Max(); !near(p50, target.TimingDB) || !near(mx, slowFor) {
		t.Errorf("db p50 %v max %v, want %v and %v", p50, mx, target.TimingDB, slowFor)
	}
	var atSlow int64
	for _, b := range db.Histogram.Buckets() {
		if b.To >= slowFor/2 {
			atSlow += b.Count
		}
	}
	if atSlow != int64(slow) {
		t.Errorf("db said %v in %d responses, want %d", slowFor, atSlow, slow)
	}
	if p := app.Histogram.Percentile(99); !near(p, target.TimingApp) {
		t.Errorf("app p99 %v, want %v", p, target.TimingApp)
	}
}

// TestOwnTraceparentWins: a request that carries its own traceparent keeps it, and that id
// is what the slowest list shows.
func TestOwnTraceparentWins(t *testing.T) {
	t.Parallel()
	const own = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, h2 := range []bool{false, true} {
		srv := startTarget(t, target.Config{Demo: true, Log: io.Discard})
		sc := scenario.Scenario{Headers: []scenario.Header{{Name: "Traceparent", Value: own}}}
		s := run(t, ioAuto, context.Background(), srv.URL()+slowPath, Config{Requests: 51, Traceparent: true, HTTP2: h2, Timeout: measure.Duration(10 * time.Second)}, sc)
		slow := srv.SlowTraces()
		if len(slow) != 2 || slow[0] != "4bf92f3577b34da6a3ce929d0e0e4736" || slow[1] != slow[0] {
			t.Errorf("http2 %v: the target saw trace ids %q on its slow requests, want the request's own twice", h2, slow)
		}
		if got := s.Exemplars.Slowest[0].Trace.String(); got != "4bf92f3577b34da6a3ce929d0e0e4736" {
			t.Errorf("http2 %v: slowest trace id %s, want the request's own", h2, got)
		}
	}
}

// TestTraceparentOffSendsNone: without --traceparent the target sees no trace context and
// samples carry no trace id, while Server-Timing is still read.
func TestTraceparentOffSendsNone(t *testing.T) {
	t.Parallel()
	srv := startTarget(t, target.Config{Demo: true, Log: io.Discard})
	s := run(t, ioAuto, context.Background(), srv.URL()+slowPath, Config{Requests: 100, Timeout: measure.Duration(10 * time.Second)})
	if slow := srv.SlowTraces(); len(slow) != 2 || slow[0] != "" {
		t.Errorf("the target saw trace ids %q, want none", slow)
	}
	if e := s.Exemplars.Slowest[0]; !e.Trace.IsZero() || e.Latency.Duration() < slowFor {
		t.Errorf("slowest = %+v, want a slow request without trace id", e)
	}
	checkTiming(t, s, 2)
}

// timedResponse is nginxResponse with two Server-Timing headers.
var timedResponse = []byte("HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nServer-Timing: db;dur=2.5, cache;desc=hit\r\n" +
	"Server-Timing: app;dur=0.4\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n{\"status\":\"ok\"}")

// TestTraceparentAllocs: with --traceparent and Server-Timing in every response, the event
// loops (closed and open loop) and the goroutine workers still allocate nothing per request:
// 10x the requests cost about the same allocations.
func TestTraceparentAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	addr, _ := cannedServer(t, timedResponse)
	url := "http://" + addr + "/healthz"
	for _, p := range []struct {
		name string
		mode ioMode
		cfg  Config
	}{
		{"evloop/closed", ioEvloop, Config{Connections: 20}},
		{"uring/closed", ioUring, Config{Connections: 20}},
		{"goroutines/closed", ioGoroutines, Config{Connections: 20}},
		{"evloop/open", ioEvloop, Config{Rate: 20000, Connections: 20, MaxConnections: 20}},
	} {
		t.Run(p.name, func(t *testing.T) {
			cfg := p.cfg
			cfg.Threads, cfg.Traceparent = 1, true
			checkNoAllocs(t, p.mode, url, cfg, func(s *measure.Step) {
				if s.ServerTiming.Metric("db") == nil || s.Exemplars.Slowest[0].Trace.IsZero() {
					t.Fatalf("Server-Timing %+v, slowest %+v: want db and trace ids", s.ServerTiming, s.Exemplars.Slowest[0])
				}
			})
		})
	}
}
