package cluster

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apiperf/apiperf/conditions"
	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
)

// forgery is what a fake worker sends once it has its plan.
type forgery func(p *Plan, send func(*message))

// fakeWorker joins addr with the right token, answers the clock sync, beats, and on each
// plan sends what forge makes (a nil forge: it leaves as soon as the plan comes, before the
// start); it ends when the coordinator is done or gone.
func fakeWorker(t *testing.T, addr string, forge forgery) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c := newConn(nc)
	if err := handshake(c, addr, testToken, WorkerOptions{Log: io.Discard, version: Version, host: "fake\x1b[31mred\x1b[0m"}); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); c.beat(done) }()
	go func() {
		defer wg.Done()
		defer close(done)
		for m := range c.readLoop() {
			switch m.Type {
			case msgPing:
				c.send(&message{Type: msgPong, T0: m.T0, T1: time.Now().UnixNano()}, time.Second)
			case msgPlan:
				if forge == nil {
					nc.Close()
					return
				}
				time.Sleep(time.Until(m.Plan.StartAt))
				forge(m.Plan, func(f *message) { c.send(f, time.Second) })
			case msgDone:
				return
			}
		}
	}()
	t.Cleanup(func() { nc.Close(); wg.Wait() })
}

// realAndFake starts a coordinator with one real worker (run, against a counting server;
// nil: the engine) and one fake one that sends forge.
func realAndFake(t *testing.T, run RunFunc, forge forgery) (*Coordinator, func() int64) {
	t.Helper()
	srv, served := countingServer(t)
	coord, err := Listen("127.0.0.1:0", Job{Scenario: scenario.Scenario{URL: srv.URL}, Expected: measure.DefaultExpected()},
		Options{Workers: 2, Token: testToken, JoinTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if run == nil {
			run = Engine(io.Discard)
		}
		Work(ctx, coord.Addr(), testToken, run, WorkerOptions{})
	}()
	joined := make(chan error, 1)
	go func() { joined <- coord.Join(context.Background()) }()
	// The real worker joins first, so it is worker 1 and the fake worker 2.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		coord.mu.Lock()
		n := len(coord.members)
		coord.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the real worker did not join")
		}
	}
	fakeWorker(t, coord.Addr(), forge)
	if err := <-joined; err != nil {
		t.Fatalf("Join: %v", err)
	}
	t.Cleanup(func() { coord.Close(); cancel(); wg.Wait() })
	return coord, served.Load
}

// honestStep is a consistent step of n 100 us responses starting at start.
func honestStep(start time.Time, n int64, elapsed time.Duration) *measure.Step {
	s := &measure.Step{Start: start, Elapsed: measure.Duration(elapsed), Attempts: n, Requests: n, Successes: n,
		Bytes: 100 * n, Status: map[int]int64{200: n}, Latency: measure.NewHistogram(), AllAttempts: measure.NewHistogram(), Threads: 1}
	s.Latency.RecordN(100*time.Microsecond, n)
	s.AllAttempts.RecordN(100*time.Microsecond, n)
	return s
}

// honestInterval is a consistent interval i of n responses.
func honestInterval(start time.Time, i, n int64) *measure.Interval {
	iv := &measure.Interval{Index: i, Start: measure.Duration(time.Duration(i) * time.Second), Length: measure.Duration(time.Second),
		Attempts: n, Requests: n, Successes: n, Status: map[int]int64{200: n}, Latency: measure.NewHistogram(), StepStart: start}
	iv.Latency.RecordN(100*time.Microsecond, n)
	return iv
}

// serverTiming is a consistent Server-Timing record: one metric "db" sent by metric of the
// responses responses that had any, each 1 ms.
func serverTiming(responses, metric int64) *measure.ServerTiming {
	st := &measure.ServerTiming{Responses: responses, Unaccounted: measure.NewHistogram(),
		Metrics: []measure.MetricTiming{{Name: "db", Responses: metric, Histogram: measure.NewHistogram()}}}
	st.Unaccounted.RecordN(100*time.Microsecond, responses)
	st.Metrics[0].Histogram.RecordN(time.Millisecond, metric)
	return st
}

func stepMsg(s *measure.Step) *message { return &message{Type: msgStep, Step: s} }

// withConditions is a step message with honest conditions (one step of one CPU) that
// forge then changes.
func withConditions(s *measure.Step, forge func(*conditions.Record)) *message {
	r := &conditions.Record{Version: conditions.Version, Generator: conditions.Generator{CPUs: 2, GOMAXPROCS: 2, CPUModel: "cpu\x1b[2J"},
		Steps: []conditions.StepSample{{Seconds: 0.5, Busy: 1, Apiperf: 0.5, Others: 0.5, OthersMax: 0.6, Samples: 1}}}
	forge(r)
	return &message{Type: msgStep, Step: s, Conditions: r}
}
func intervalMsg(iv *measure.Interval) *message { return &message{Type: msgInterval, Interval: iv} }

// TestForgedReportsDropped: a worker with the token sends each forgery of the issue (and
// more); the coordinator names it, drops it, merges only the real worker's step, and the
// run is partial. Every case ends within its deadline.
func TestForgedReportsDropped(t *testing.T) {
	count := load.Config{Connections: 2, Threads: 1, Requests: 100, Timeout: measure.Duration(time.Second)}
	timed := load.Config{Connections: 2, Threads: 1, Duration: measure.Duration(500 * time.Millisecond), Timeout: measure.Duration(time.Second)}
	for _, tc := range []struct {
		name  string
		cfg   load.Config
		forge forgery
		want  string // in the dropped worker's line
	}{
		{"negative counts", timed, func(p *Plan, send func(*message)) {
			s := honestStep(time.Now(), 0, time.Second)
			s.Attempts, s.Requests, s.Successes = -702025, -702025, -702025
			send(stepMsg(s))
		}, "-702025 attempts"},
		{"int64 overflow", timed, func(p *Plan, send func(*message)) {
			s := honestStep(time.Now(), 0, time.Second)
			s.Attempts, s.Requests, s.Successes, s.Bytes = math.MaxInt64, math.MaxInt64, math.MaxInt64, math.MaxInt64
			send(stepMsg(s))
		}, "9223372036854775807 attempts"},
		{"histogram of other responses", timed, func(p *Plan, send func(*message)) {
			s := honestStep(time.Now(), 50, time.Second)
			s.Latency.RecordN(100*time.Microsecond, 100000) // p50 = p99 = 100 us for the whole run
			send(stepMsg(s))
		}, "100050 samples for 50 responses"},
		{"Server-Timing histogram of 9.2e18 samples", timed, func(p *Plan, send func(*message)) {
			s := honestStep(time.Now(), 50, time.Second)
			s.ServerTiming = serverTiming(50, 50)
			s.ServerTiming.Metrics[0].Histogram.RecordN(100*time.Microsecond, math.MaxInt64/2) // every Server-Timing percentile 100 us
			send(stepMsg(s))
		}, "server-timing db: more than"},
		{"Server-Timing of more responses than the step", timed, func(p *Plan, send func(*message)) {
			s := honestStep(time.Now(), 50, time.Second)
			s.ServerTiming = serverTiming(5000, 5000)
			send(stepMsg(s))
		}, "5000 responses with Server-Timing of 50"},
		{"Server-Timing metric of other responses", timed, func(p *Plan, send func(*message)) {
			s := honestStep(time.Now(), 50, time.Second)
			s.ServerTiming = serverTiming(50, 40)
			s.ServerTiming.Metrics[0].Histogram.RecordN(time.Second, 1000)
			send(stepMsg(s))
		}, "server-timing db: 1040 samples for 40 responses"},
		{"endpoint histogram of other responses", timed, func(p *Plan, send func(*message)) {
			s := honestStep(time.Now(), 50, time.Second)
			h := measure.NewHistogram()
			h.RecordN(100*time.Microsecond, 1<<40)
			s.Endpoints = []measure.EndpointStats{{Name: "a", Requests: 50, Successes: 50, Status: map[int]int64{200: 50}, Latency: h}}
			send(stepMsg(s))
		}, "endpoint a latency: 1099511627776 samples for 50 responses"},
		{"exemplars beyond its attempts", timed, func(p *Plan, send func(*message)) {
			s := honestStep(time.Now(), 50, time.Second)
			s.Exemplars = &measure.Exemplars{Keep: 100, Slowest: make([]measure.Exemplar, 100)}
			send(stepMsg(s))
		}, "100 exemplars of 50 attempts"},
		{"generator limit of negative connections", timed, func(p *Plan, send func(*message)) {
			s := honestStep(time.Now(), 50, time.Second)
			s.GeneratorLimit = &measure.GeneratorLimit{Errno: "EMFILE\x1b[2J", Connections: -5, Wanted: 10}
			send(stepMsg(s))
		}, "generator limit at -5 of 10 connections"},
		{"failure of an unknown kind", timed, func(p *Plan, send func(*message)) {
			s := honestStep(time.Now(), 50, time.Second)
			s.Failure = &measure.Failure{Kind: "x\x1b[2J", Reason: "r"}
			send(stepMsg(s))
		}, "failure of kind"},
		{"errors do not add up", timed, func(p *Plan, send func(*message)) {
			s := honestStep(time.Now(), 50, time.Second)
			s.Attempts = 80
			send(stepMsg(s))
		}, "80 attempts but 50 responses and errors"},
		{"statuses exceed responses", timed, func(p *Plan, send func(*message)) {
			s := honestStep(time.Now(), 50, time.Second)
			s.Status[500] = 1 << 40
			send(stepMsg(s))
		}, "status 500"},
		{"before the start, beyond its -n share", count, func(p *Plan, send func(*message)) {
			send(stepMsg(honestStep(p.StartAt.Add(-10*time.Second), 3000, 3*time.Second)))
		}, "before the step did"},
		{"beyond its -n share", count, func(p *Plan, send func(*message)) {
			send(stepMsg(honestStep(time.Now(), 3000, 10*time.Millisecond)))
		}, "3000 attempts, more than its share allows (50)"},
		{"interval index 2^62", timed, func(p *Plan, send func(*message)) {
			send(intervalMsg(honestInterval(time.Now(), 1<<62, 1)))
			send(stepMsg(honestStep(time.Now(), 1, 10*time.Millisecond)))
		}, "beyond the step's length"},
		{"intervals out of order", timed, func(p *Plan, send func(*message)) {
			send(intervalMsg(honestInterval(time.Now(), 0, 1)))
			send(intervalMsg(honestInterval(time.Now(), 0, 1)))
		}, "out of order"},
		{"interval of more streams than responses", timed, func(p *Plan, send func(*message)) {
			iv := honestInterval(time.Now(), 0, 5)
			iv.Streams = &measure.Streams{Streams: 1 << 40, Messages: 5, First: measure.NewHistogram(), Gap: measure.NewHistogram()}
			send(intervalMsg(iv))
		}, "1099511627776 streams of 5 messages for 5 responses"},
		{"interval of more first messages than streams", timed, func(p *Plan, send func(*message)) {
			iv := honestInterval(time.Now(), 0, 5)
			iv.Streams = &measure.Streams{Streams: 2, Messages: 5, First: measure.NewHistogram(), Gap: measure.NewHistogram()}
			iv.Streams.First.RecordN(time.Microsecond, 1000)
			send(intervalMsg(iv))
		}, "1000 first messages for 2 streams"},
		{"interval of streams longer than their messages", timed, func(p *Plan, send func(*message)) {
			iv := honestInterval(time.Now(), 0, 5)
			iv.Streams = &measure.Streams{Streams: 2, Messages: 5, MinMessages: 1, MaxMessages: 1 << 40, First: measure.NewHistogram(), Gap: measure.NewHistogram()}
			send(intervalMsg(iv))
		}, "2 streams (0 empty) of 5 messages, 1 to 1099511627776 per stream"},
		{"interval without latency", timed, func(p *Plan, send func(*message)) {
			iv := honestInterval(time.Now(), 0, 5)
			iv.Latency = nil
			send(intervalMsg(iv))
		}, "missing for 5 responses"},
		{"window longer than the step", timed, func(p *Plan, send func(*message)) {
			send(stepMsg(honestStep(time.Now().Add(-time.Hour), 1, time.Hour)))
		}, "before the step did"},
		{"step in the future", timed, func(p *Plan, send func(*message)) {
			send(stepMsg(honestStep(time.Now().Add(time.Hour), 1, time.Second)))
		}, "in the future"},
		{"conditions of 1e300 cores", timed, func(p *Plan, send func(*message)) {
			send(withConditions(honestStep(time.Now(), 50, 10*time.Millisecond), func(r *conditions.Record) { r.Steps[0].Others = 1e300 }))
		}, "its conditions: "},
		{"conditions of negative steal", timed, func(p *Plan, send func(*message)) {
			send(withConditions(honestStep(time.Now(), 50, 10*time.Millisecond), func(r *conditions.Record) { r.Steps[0].StealPct = -3 }))
		}, "its conditions: "},
		{"conditions of two steps", timed, func(p *Plan, send func(*message)) {
			send(withConditions(honestStep(time.Now(), 50, 10*time.Millisecond), func(r *conditions.Record) { r.Steps = append(r.Steps, r.Steps[0]) }))
		}, "its conditions: 2 steps"},
		{"conditions of a day-long step", timed, func(p *Plan, send func(*message)) {
			send(withConditions(honestStep(time.Now(), 50, 10*time.Millisecond), func(r *conditions.Record) { r.Steps[0].Seconds = 86400 }))
		}, "its conditions: "},
		{"conditions of 2^40 CPUs", timed, func(p *Plan, send func(*message)) {
			send(withConditions(honestStep(time.Now(), 50, 10*time.Millisecond), func(r *conditions.Record) { r.Generator.CPUs = 1 << 40 }))
		}, "its conditions: 1099511627776 CPUs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			coord, served := realAndFake(t, nil, tc.forge)
			begin := time.Now()
			step, err := coord.Step(context.Background(), tc.cfg)
			if err != nil {
				t.Fatalf("Step: %v", err)
			}
			took := time.Since(begin)
			lost := strings.Join(coord.Lost(), "\n")
			if !coord.Partial() || !strings.Contains(lost, "worker 2 (fake?[31mred?[0m") || !strings.Contains(lost, "dropped") || !strings.Contains(lost, tc.want) {
				t.Errorf("Lost() = %q; want worker 2 named (escapes made safe), dropped, saying %q", lost, tc.want)
			}
			real := coord.Workers()[0]
			if step.Requests != real.Responses || step.Requests <= 0 || step.Latency.Count() != step.Requests || step.Attempts < 0 {
				t.Errorf("merged %d responses (%d latencies, %d attempts), the real worker %d: want only the real worker's", step.Requests, step.Latency.Count(), step.Attempts, real.Responses)
			}
			if tc.cfg.Requests > 0 && served() != 50 {
				t.Errorf("the server answered %d requests, want the real worker's 50", served())
			}
			if took > 12*time.Second { // room for a busy machine; a timed step's deadline is 14s
				t.Errorf("Step took %v", took)
			}
			t.Logf("%v: %s", took.Round(time.Millisecond), lost)
		})
	}
}

// TestLateWorkerKept: a worker on a busy machine that ends its timed share seconds late,
// sealing intervals past the window and the drain until it does, is honest: its intervals
// and its step, in before its deadline, are merged (they were dropped as forged, with all
// its data, when an interval's index passed the window and the drain).
func TestLateWorkerKept(t *testing.T) {
	// A 2s window (the real worker's, started late on a busy machine, still overlaps the
	// fake's) and 0.5s drain: with the 2s slack, intervals 0-4; the late worker seals 0-5.
	const late = 6
	coord, _ := realAndFake(t, nil, func(p *Plan, send func(*message)) {
		time.Sleep(late * time.Second) // the last interval ends now
		for i := range int64(late) {
			send(intervalMsg(honestInterval(p.StartAt, i, 1)))
		}
		send(stepMsg(honestStep(p.StartAt, late, 2*time.Second)))
	})
	cfg := load.Config{Connections: 2, Threads: 1, Duration: measure.Duration(2 * time.Second), Timeout: measure.Duration(500 * time.Millisecond)}
	step, err := coord.Step(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Step: %v", err)
	}
	real := coord.Workers()[0]
	if coord.Partial() || step.Requests != real.Responses+late {
		t.Errorf("Partial() = %v, Lost() = %q, merged %d responses; want the late worker's %d kept beside the real worker's %d",
			coord.Partial(), coord.Lost(), step.Requests, late, real.Responses)
	}
}

// silent is a fake worker that beats but never sends an interval or its step.
func silent(*Plan, func(*message)) {}

// TestStalledWorkerDeadline: a worker that keeps beating but never sends its step is
// dropped at the step's planned end + timeout + grace; the real worker's step is merged.
func TestStalledWorkerDeadline(t *testing.T) {
	defer func(g time.Duration) { stepGrace = g }(stepGrace)
	stepGrace = 500 * time.Millisecond
	coord, _ := realAndFake(t, nil, silent)
	cfg := load.Config{Connections: 2, Threads: 1, Duration: measure.Duration(500 * time.Millisecond), Timeout: measure.Duration(500 * time.Millisecond)}
	begin := time.Now()
	step, err := coord.Step(context.Background(), cfg)
	took := time.Since(begin)
	if err != nil {
		t.Fatalf("Step: %v", err)
	}
	lost := strings.Join(coord.Lost(), "\n")
	if !strings.Contains(lost, "worker 2") || !strings.Contains(lost, "no step by") || step.Requests == 0 || !step.Interrupted {
		t.Errorf("Lost() = %q, merged %d responses, interrupted %v; want worker 2 lost for no step, the real worker's responses, interrupted", lost, step.Requests, step.Interrupted)
	}
	// start lead 0.5s + duration 0.5s + timeout 0.5s + grace 0.5s + slack 2s, and the tick:
	// about 4s; the rest is room for a busy machine (without the deadline it never returns).
	if took > 15*time.Second {
		t.Errorf("Step returned after %v, want within the deadline of about 4s", took)
	}
	t.Logf("%v: %s", took.Round(time.Millisecond), lost)
}

// TestStopWithStalledWorker: when the run is interrupted (Ctrl-C) while a worker holds its
// step back, Step returns within the timeout and stopGrace with what the others measured.
func TestStopWithStalledWorker(t *testing.T) {
	defer func(g time.Duration) { stopGrace = g }(stopGrace)
	// Long enough for the real worker to send its step on a busy machine; far shorter than
	// the silent worker's other ends (no interval for 13s, the step's end after a minute).
	stopGrace = 2 * time.Second
	run, measuring := streaming(Engine(io.Discard), 1) // the real worker
	coord, _ := realAndFake(t, run, silent)
	cfg := load.Config{Connections: 2, Threads: 1, Duration: measure.Duration(time.Minute), Timeout: measure.Duration(500 * time.Millisecond)}
	ctx, cancel := context.WithCancel(context.Background())
	var stopped atomic.Int64 // when Ctrl-C came, in Unix nanoseconds
	go func() {
		// Ctrl-C once the real worker is measuring (an interval of it is in): a fixed
		// time could come before its start on a busy machine, and it would have nothing.
		select {
		case <-measuring:
			stopped.Store(time.Now().UnixNano())
			cancel()
		case <-t.Context().Done():
		}
	}()
	step, err := coord.Step(ctx, cfg)
	took := time.Since(time.Unix(0, stopped.Load()))
	if err != nil {
		t.Fatalf("Step: %v", err)
	}
	lost := strings.Join(coord.Lost(), "\n")
	if !strings.Contains(lost, "worker 2") || !strings.Contains(lost, "told to stop") || step.Requests == 0 || coord.Workers()[0].Responses != step.Requests {
		t.Errorf("Lost() = %q, merged %d responses; want worker 2 lost after the stop and the real worker's responses", lost, step.Requests)
	}
	if stopped.Load() == 0 || took > 8*time.Second {
		t.Errorf("Step returned %v after the stop (0: before it), want within the timeout and grace (2.5s) and the tick", took)
	}
	t.Logf("%v: %s", took.Round(time.Millisecond), lost)
}

// TestJoinWithIdleAndSlowJoiners: connections that send nothing, a byte at a time, or an
// oversized hello neither hold a real worker off nor outlive the pre-auth limits.
func TestJoinWithIdleAndSlowJoiners(t *testing.T) {
	coord, err := Listen("127.0.0.1:0", Job{Scenario: scenario.Scenario{URL: "http://127.0.0.1:1/"}},
		Options{Workers: 1, Token: testToken, JoinTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer coord.Close()
	var hostile []net.Conn
	for range 3 { // idle
		nc, err := net.Dial("tcp", coord.Addr())
		if err != nil {
			t.Fatal(err)
		}
		hostile = append(hostile, nc)
	}
	slow, err := net.Dial("tcp", coord.Addr())
	if err != nil {
		t.Fatal(err)
	}
	hostile = append(hostile, slow)
	go func() {
		for range 100 {
			if _, err := slow.Write([]byte(" ")); err != nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	big, err := net.Dial("tcp", coord.Addr())
	if err != nil {
		t.Fatal(err)
	}
	hostile = append(hostile, big)
	bigClosed := make(chan time.Duration, 1)
	go func() {
		begin := time.Now()
		big.Write([]byte(`{"type":"hello","host":"`))
		chunk := []byte(strings.Repeat("x", 1024))
		for range 1024 { // 1 MiB, far past the pre-auth limit
			if _, err := big.Write(chunk); err != nil {
				break
			}
		}
		io.Copy(io.Discard, big) // the challenge, then the close
		bigClosed <- time.Since(begin)
	}()
	defer func() {
		for _, nc := range hostile {
			nc.Close()
		}
	}()
	time.Sleep(100 * time.Millisecond)
	go Work(context.Background(), coord.Addr(), testToken, func(context.Context, *Plan, func(*measure.Interval)) (*measure.Step, error) {
		return nil, nil
	}, WorkerOptions{})
	begin := time.Now()
	if err := coord.Join(context.Background()); err != nil {
		t.Fatalf("Join with idle, slow and oversized joiners: %v", err)
	}
	// At once, with room for a busy machine: admitted one after the other, the real worker
	// would wait out the pre-auth deadline of the idle and slow joiners (3 x 3s or more).
	if took := time.Since(begin); took > 2*preAuthDeadline {
		t.Errorf("the real worker joined after %v, want at once", took)
	}
	select {
	case d := <-bigClosed:
		t.Logf("the oversized hello was cut off after %v", d)
	case <-time.After(2 * preAuthDeadline):
		t.Error("a 1 MiB hello was not cut off")
	}
	// The idle joiners were closed when the join ended.
	for _, nc := range hostile[:3] {
		nc.SetReadDeadline(time.Now().Add(2 * time.Second))
		if _, err := io.Copy(io.Discard, nc); err != nil {
			t.Errorf("an idle joiner's connection is still open after the join: %v", err)
		}
	}
}

// TestJoinTimeoutWhole: --join-timeout bounds the whole join, however many joiners stall.
func TestJoinTimeoutWhole(t *testing.T) {
	coord, err := Listen("127.0.0.1:0", Job{}, Options{Workers: 1, Token: testToken, JoinTimeout: 700 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer coord.Close()
	for range 4 {
		nc, err := net.Dial("tcp", coord.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
	}
	begin := time.Now()
	err = coord.Join(context.Background())
	// Within the join timeout and room for a busy machine, before the joiners' own pre-auth
	// deadline (3s) would have ended them.
	if took := time.Since(begin); !strings.Contains(fmt.Sprint(err), "0 of 1 joined within 700ms") || took > 2900*time.Millisecond {
		t.Errorf("Join with 4 idle joiners and a 700ms join timeout = %v after %v; want the timeout within 2.9s", err, took)
	}
}

// TestTooManyHistograms: a message holding more histograms than a step can have is
// refused before they are decoded (each would take about 190 KB however small on the wire).
func TestTooManyHistograms(t *testing.T) {
	coord, _ := realAndFake(t, nil, func(p *Plan, send func(*message)) {
		s := honestStep(time.Now(), 1, 10*time.Millisecond)
		for i := range 300 {
			s.Endpoints = append(s.Endpoints, measure.EndpointStats{Name: fmt.Sprint(i), Latency: measure.NewHistogram()})
		}
		send(stepMsg(s))
	})
	step, err := coord.Step(context.Background(), load.Config{Connections: 2, Threads: 1, Duration: measure.Duration(500 * time.Millisecond), Timeout: measure.Duration(time.Second)})
	if err != nil {
		t.Fatalf("Step: %v", err)
	}
	lost := strings.Join(coord.Lost(), "\n")
	if !strings.Contains(lost, "worker 2") || !strings.Contains(lost, "dropped") || !strings.Contains(lost, "302 histograms (at most 263)") || step.Requests == 0 {
		t.Errorf("Lost() = %q, merged %d; want worker 2 dropped for its histograms and the real worker merged", lost, step.Requests)
	}
}

// TestWorkerLostBeforeStart: a worker gone between its plan and the step's start is said to
// be lost before the start, not "-495ms into the step".
func TestWorkerLostBeforeStart(t *testing.T) {
	coord, _ := realAndFake(t, nil, nil)
	if _, err := coord.Step(context.Background(), load.Config{Connections: 2, Threads: 1, Duration: measure.Duration(300 * time.Millisecond), Timeout: measure.Duration(time.Second)}); err != nil {
		t.Fatalf("Step: %v", err)
	}
	lost := strings.Join(coord.Lost(), "\n")
	if !strings.Contains(lost, "worker 2") || !strings.Contains(lost, "before the step's start") || strings.Contains(lost, "-") && strings.Contains(lost, "ms into") {
		t.Errorf("Lost() = %q; want worker 2 lost before the step's start", lost)
	}
}

// TestOversizedMessageNamed: a message past the size bound is refused with an error that says
// so, not an "i/o timeout", even when it takes longer to arrive than the silence that ends a
// connection (deadAfter): here about 6 s, as over a slow link.
func TestOversizedMessageNamed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		nc, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			return
		}
		defer nc.Close()
		chunk := []byte(`{"type":"step","step":{"label":"` + strings.Repeat("x", 1<<20))
		start := time.Now()
		for sent := 0; sent <= maxMessage+1<<20; sent += len(chunk) {
			if _, err := nc.Write(chunk); err != nil {
				return
			}
			chunk = chunk[len(chunk)-1<<20:]
			// 65 MiB over about 6 s: a link of about 90 Mbit/s.
			time.Sleep(time.Until(start.Add(time.Duration(sent) * 6 * time.Second / (maxMessage + 1<<20))))
		}
	}()
	nc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	begin := time.Now()
	_, err = newConn(nc).recv(deadAfter)
	if err == nil || !strings.Contains(err.Error(), "longer than") || time.Since(begin) < deadAfter {
		t.Errorf("recv of a %d MiB message arriving over 6 s = %v after %v; want it refused as longer than the bound once the bound is read", (maxMessage+1<<20)>>20, err, time.Since(begin))
	}
}

// An honest worker's step whose slowest requests were timeouts (attempts, not responses)
// keeps them: 4 exemplars of 1 response and 3 timeouts is no forgery (a worker was dropped
// for it when its target was slow). Conditions sampled over 0.2 ms (clock ticks read as 56
// cores) are kept as unknown, not refused.
func TestExemplarsOfFailedAttempts(t *testing.T) {
	s := honestStep(time.Now(), 1, time.Second)
	s.Attempts, s.Errors.Timeout = 4, 3
	s.Exemplars = &measure.Exemplars{Keep: 10, Slowest: make([]measure.Exemplar, 4)}
	if err := checkParts(s, 1<<20, 1<<20); err != nil {
		t.Errorf("4 exemplars of 4 attempts (1 response, 3 timeouts): %v; want kept", err)
	}
	s.Exemplars.Slowest = make([]measure.Exemplar, 5)
	if err := checkParts(s, 1<<20, 1<<20); err == nil {
		t.Error("5 exemplars of 4 attempts: kept; want refused")
	}
	// A starved worker's step of 2 attempts: its 4 bands (p50 to p99.9) are its 2 requests
	// standing for several percentiles each, as measure picks them (a worker was dropped for it).
	s.Attempts, s.Errors.Timeout = 2, 1
	s.Exemplars.Slowest = make([]measure.Exemplar, 2)
	s.Exemplars.Pool = make([]measure.Exemplar, 2)
	for _, p := range measure.Bands {
		s.Exemplars.Bands = append(s.Exemplars.Bands, measure.Band{Percentile: p})
	}
	if err := checkParts(s, 1<<20, 1<<20); err != nil {
		t.Errorf("4 bands of 2 attempts: %v; want kept", err)
	}
	s.Exemplars.Bands = append(s.Exemplars.Bands, measure.Band{Percentile: 99.99})
	if err := checkParts(s, 1<<20, 1<<20); err == nil {
		t.Error("5 bands: kept; want refused")
	}
	rec := &conditions.Record{Version: conditions.Version, Generator: conditions.Generator{CPUs: 2},
		Steps: []conditions.StepSample{{Seconds: 0.0002, Busy: 3, Apiperf: 56.88, Samples: 2}}}
	if err := (limits{}).checkConditions(rec, measure.Duration(time.Millisecond)); err != nil || rec.Steps[0].Apiperf != 0 || rec.Steps[0].Samples != 2 {
		t.Errorf("conditions over 0.2 ms: %v, %+v; want kept, their CPU unknown", err, rec.Steps[0])
	}
}
