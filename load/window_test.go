package load

import (
	"context"
	"testing"
	"time"

	"github.com/apiperf/apiperf/internal/testenv"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/target"
)

// The measured window is the duration: requests in flight when it closes are drained (their
// latency is recorded) but do not stretch it, and only what completed inside it is a rate.

func TestWindowOpenLoopSlowTarget(t *testing.T) { eachIO(t, testWindowOpenLoopSlowTarget) }

// 40 req/s for 1 s at 600 ms each. What holds however starved the generator: the window is
// the duration, every response takes 600 ms (so only requests sent in the first 0.4 s, at
// most 16, complete inside it), and the responses drained after it are recorded. The pool
// grows to send all 40 on time only when the generator is not short of CPU, so how many are
// sent and drained is TestTimingWindowOpenLoopSlowTarget's.
func testWindowOpenLoopSlowTarget(t *testing.T, mode ioMode) {
	s, _ := windowOpenLoopSlowTarget(t, mode)
	if s.Requests < 4 || s.Requests > 40 || s.Latency.Count() != s.Requests {
		t.Errorf("requests = %d (histogram %d), want 4 to 40, each recorded, drained ones included", s.Requests, s.Latency.Count())
	}
	if s.InWindow() > 16 || s.Drained.Requests < 1 || s.Drained.Attempts != s.Drained.Requests {
		t.Errorf("in window %d, drained %+v; want at most 16 inside the window and the rest drained after it", s.InWindow(), s.Drained)
	}
}

// TestTimingWindowOpenLoopSlowTarget: a generator that keeps the schedule sends all 40; the
// 16 or so sent in the first 0.4 s complete inside the window, the rest (about 24) after it.
func TestTimingWindowOpenLoopSlowTarget(t *testing.T) {
	testenv.Timing(t)
	eachIO(t, func(t *testing.T, mode ioMode) {
		s, took := windowOpenLoopSlowTarget(t, mode)
		if took < 1300*time.Millisecond {
			t.Errorf("Run returned after %v: the requests in flight at 1s were not drained", took)
		}
		if s.Requests != 40 || s.Latency.Count() != 40 {
			t.Errorf("requests = %d (histogram %d), want all 40 sent, drained ones included", s.Requests, s.Latency.Count())
		}
		if s.Drained.Requests < 18 || s.Drained.Requests > 30 {
			t.Errorf("drained = %+v, want about 24 responses after the window", s.Drained)
		}
	})
}

func windowOpenLoopSlowTarget(t *testing.T, mode ioMode) (*measure.Step, time.Duration) {
	srv := startTarget(t, target.Config{})
	const rate, dur, lat = 40.0, time.Second, 600 * time.Millisecond
	start := time.Now()
	s := run(t, mode, context.Background(), srv.URL()+"/knob?delay=600ms",
		Config{Rate: rate, Duration: measure.Duration(dur), Timeout: measure.Duration(3 * time.Second)})
	took := time.Since(start)
	if s.Elapsed.Duration() != dur {
		t.Errorf("window = %v, want exactly the %v duration (the drain must not stretch it)", s.Elapsed.Duration(), dur)
	}
	if s.Requests > 0 && s.Latency.Min() < lat-lat/100 {
		t.Errorf("min latency %v, want every response's %v", s.Latency.Min(), lat)
	}
	if got, want := s.QPS(), float64(s.InWindow())/dur.Seconds(); got != want {
		t.Errorf("QPS() = %v, want responses inside the window / 1 s = %v", got, want)
	}
	if p99 := s.Latency.Percentile(99); s.Drained.Requests > 0 && p99 < lat {
		t.Errorf("p99 = %v: the drained requests' %v latency is missing", p99, lat)
	}
	return s, took
}

func TestWindowClosedLoopSlowTarget(t *testing.T) { eachIO(t, testWindowClosedLoopSlowTarget) }

func testWindowClosedLoopSlowTarget(t *testing.T, mode ioMode) {
	srv := startTarget(t, target.Config{})
	// Nothing completes inside a 400 ms window; the 4 requests in flight end at 700 ms.
	s := run(t, mode, context.Background(), srv.URL()+"/knob?delay=700ms",
		Config{Duration: measure.Duration(400 * time.Millisecond), Timeout: measure.Duration(2 * time.Second)})
	if s.Elapsed.Duration() != 400*time.Millisecond {
		t.Errorf("window = %v, want 400ms", s.Elapsed.Duration())
	}
	if s.InWindow() != 0 || s.QPS() != 0 {
		t.Errorf("%d requests in the window (QPS %v), want 0", s.InWindow(), s.QPS())
	}
	if s.Drained.Requests != 4 || s.Requests != 4 || s.Latency.Count() != 4 {
		t.Errorf("drained %+v, requests %d, histogram %d; want the 4 in flight drained and recorded", s.Drained, s.Requests, s.Latency.Count())
	}
}

func TestWindowRequestCountEndsAtLastResponse(t *testing.T) {
	eachIO(t, testWindowRequestCountEndsAtLastResponse)
}

func testWindowRequestCountEndsAtLastResponse(t *testing.T, mode ioMode) {
	srv := startTarget(t, target.Config{})
	start := time.Now()
	s := run(t, mode, context.Background(), srv.URL()+"/knob?delay=5ms", Config{Requests: 40})
	took := time.Since(start)
	if s.Drained != (measure.Drained{}) || s.InWindow() != 40 {
		t.Errorf("-n 40: drained %+v, in window %d; want nothing drained", s.Drained, s.InWindow())
	}
	if el := s.Elapsed.Duration(); el <= 0 || el > took {
		t.Errorf("window = %v, want up to the last response (the run took %v)", el, took)
	}
}

func TestWindowWarmupIsNotRecorded(t *testing.T) { eachIO(t, testWindowWarmupIsNotRecorded) }

// warmupRun loads a 300 ms target at 100 req/s with a 500 ms warmup and a 1 s window.
func warmupRun(t *testing.T, mode ioMode) *measure.Step {
	srv := startTarget(t, target.Config{})
	before := time.Now()
	s := run(t, mode, context.Background(), srv.URL()+"/knob?delay=300ms",
		Config{Rate: 100, Warmup: measure.Duration(500 * time.Millisecond), Duration: measure.Duration(time.Second)})
	if s.Elapsed.Duration() != time.Second {
		t.Errorf("window = %v, want 1s", s.Elapsed.Duration())
	}
	if d := s.Start.Sub(before); d < 500*time.Millisecond {
		t.Errorf("window starts %v after Run was called, want after the 500ms warmup", d)
	}
	return s
}

// What holds however late a starved generator sends: a response completes at least 300 ms
// after its request was due, so the window (0.5 s to 1.5 s) holds at most the 120 due before
// 1.2 s (about 150 would mean the warmup's completions were counted), and exactly the 100
// requests due inside it are scheduled.
func testWindowWarmupIsNotRecorded(t *testing.T, mode ioMode) {
	s := warmupRun(t, mode)
	if n := s.InWindow(); n < 1 || n > 120 {
		t.Errorf("%d responses in the window, want 1 to 120: no more than were due by 1.2 s (warmup completions excluded)", n)
	}
	if s.Open == nil || s.Open.Scheduled != 100 {
		t.Errorf("scheduled %+v, want the 100 requests due inside the 1s window (not the warmup's)", s.Open)
	}
	if len(s.Timeline) == 0 || s.Timeline[0].T != 0 {
		t.Errorf("timeline %+v, want its first second to be the window's", s.Timeline)
	}
}

// TestTimingWindowWarmup: with the machine to itself, requests sent from 0.2 s to 1.2 s
// complete in the window, about 100, and the first second of the timeline is at the rate.
func TestTimingWindowWarmup(t *testing.T) {
	testenv.Timing(t)
	eachIO(t, func(t *testing.T, mode ioMode) {
		s := warmupRun(t, mode)
		if n := s.InWindow(); n < 80 || n > 110 {
			t.Errorf("%d responses in the window, want about 100 (warmup completions excluded)", n)
		}
		if got := s.AttemptRate(); got < 80 {
			t.Errorf("achieved %.1f req/s, want about 100: a warmed-up window is in steady state", got)
		}
		if len(s.Timeline) == 0 || s.Timeline[0].Requests < 80 {
			t.Errorf("timeline %+v, want its first second at about 100 responses", s.Timeline)
		}
	})
}

// An interrupted window ends when the engine's supervisor sees the cancellation: after it,
// by however long the supervisor waits for a P. Event loops may hold every P in a raw wait
// (see ringIO.hold) until the runtime preempts them, which on a loaded CI machine was 20 ms,
// and a busy machine can add seconds; the bound below tells that apart from a window that
// ran on toward its 10 s.
func TestWindowInterrupted(t *testing.T) {
	srv := startTarget(t, target.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	start := time.Now()
	var cancelled time.Time
	time.AfterFunc(300*time.Millisecond, func() { cancelled = time.Now(); cancel() })
	s := run(t, ioAuto, ctx, srv.URL()+"/knob?delay=5ms", Config{Duration: measure.Duration(10 * time.Second)})
	at := cancelled.Sub(start)
	if el := s.Elapsed.Duration(); el <= 0 || el > at+3*time.Second {
		t.Errorf("window = %v, want it to end at the interruption (%v after Run was called)", el, at)
	}
	if !s.Interrupted {
		t.Error("Interrupted is false, want true for a run cut short")
	}
}

func TestWindowOpenLoopStopsAtItsEnd(t *testing.T) { openIO(t, testWindowOpenLoopStopsAtItsEnd) }

// testWindowOpenLoopStopsAtItsEnd: 400 req/s for 1 s on at most 2 connections to a target
// that answers in 100 ms: the generator can send about 20 a second. What it did not send by
// the window's end is its shortfall, not sent afterwards (that took 20 s: 400 requests two at
// a time); only what was in flight when the window closed is drained.
func testWindowOpenLoopStopsAtItsEnd(t *testing.T, mode ioMode) {
	srv := startTarget(t, target.Config{})
	start := time.Now()
	s := run(t, mode, context.Background(), srv.URL()+"/knob?delay=100ms",
		Config{Rate: 400, Duration: measure.Duration(time.Second), Connections: 1, MaxConnections: 2, Timeout: measure.Duration(time.Second)})
	checkStoppedAtWindow(t, s, time.Since(start), 2)
}

// checkStoppedAtWindow checks an open loop of 400 req/s for 1 s that could not keep up on at
// most maxConns connections (timeout 1 s): it ended within the window, the timeout and a
// generous slack, sent nothing after the window, and its counts add up.
func checkStoppedAtWindow(t *testing.T, s *measure.Step, took time.Duration, maxConns int64) {
	t.Helper()
	if took > 6*time.Second {
		t.Errorf("Run took %v for a 1 s window and a 1 s timeout: it went on sending after the window", took)
	}
	if s.Open == nil {
		t.Fatalf("no open-loop record: %+v", s)
	}
	if s.Open.Scheduled != 400 || s.Open.Sent <= 0 || s.Open.Sent >= 200 {
		t.Errorf("scheduled %d, sent %d; want 400 due in the window and the generator's shortfall unsent", s.Open.Scheduled, s.Open.Sent)
	}
	if s.Attempts != s.Open.Sent {
		t.Errorf("attempts %d, sent inside the window %d: want every attempt started inside it", s.Attempts, s.Open.Sent)
	}
	if s.Attempts != s.Requests+s.Errors.Socket() {
		t.Errorf("attempts %d != responses %d + socket errors %d", s.Attempts, s.Requests, s.Errors.Socket())
	}
	if s.Drained.Attempts > maxConns {
		t.Errorf("drained %+v: more than the %d requests that could be in flight when the window closed", s.Drained, maxConns)
	}
}
