package load

import (
	"context"
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/target"
)

// The measured window is the duration: requests in flight when it closes are drained (their
// latency is recorded) but do not stretch it, and only what completed inside it is a rate.

func TestWindowOpenLoopSlowTarget(t *testing.T) { bothIO(t, testWindowOpenLoopSlowTarget) }

func testWindowOpenLoopSlowTarget(t *testing.T, mode ioMode) {
	srv := startTarget(t, target.Config{})
	// 40 req/s for 1 s at 600 ms each: the 16 or so sent in the first 0.4 s complete inside
	// the window, the rest (about 24) after it.
	const rate, dur, lat = 40.0, time.Second, 600 * time.Millisecond
	start := time.Now()
	s := run(t, mode, context.Background(), srv.URL()+"/knob?delay=600ms",
		Config{Rate: rate, Duration: measure.Duration(dur), Timeout: measure.Duration(3 * time.Second)})
	took := time.Since(start)
	if s.Elapsed.Duration() != dur {
		t.Errorf("window = %v, want exactly the %v duration (the drain must not stretch it)", s.Elapsed.Duration(), dur)
	}
	if took < dur+lat/2 {
		t.Errorf("Run returned after %v: the requests in flight at %v were not drained", took, dur)
	}
	if s.Requests != 40 || s.Latency.Count() != 40 {
		t.Errorf("requests = %d (histogram %d), want all 40 sent, drained ones included", s.Requests, s.Latency.Count())
	}
	if s.Drained.Requests < 18 || s.Drained.Requests > 30 || s.Drained.Attempts != s.Drained.Requests {
		t.Errorf("drained = %+v, want about 24 responses after the window", s.Drained)
	}
	if got, want := s.QPS(), float64(s.InWindow())/dur.Seconds(); got != want || got > 24 {
		t.Errorf("QPS() = %v, want responses inside the window / 1 s = %v (about 16)", got, want)
	}
	if p99 := s.Latency.Percentile(99); p99 < lat {
		t.Errorf("p99 = %v: the drained requests' %v latency is missing", p99, lat)
	}
}

func TestWindowClosedLoopSlowTarget(t *testing.T) { bothIO(t, testWindowClosedLoopSlowTarget) }

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
	bothIO(t, testWindowRequestCountEndsAtLastResponse)
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

func TestWindowWarmupIsNotRecorded(t *testing.T) { bothIO(t, testWindowWarmupIsNotRecorded) }

func testWindowWarmupIsNotRecorded(t *testing.T, mode ioMode) {
	srv := startTarget(t, target.Config{})
	// 100 req/s at 300 ms: without a warmup the first 300 ms of the window have no
	// completions; with one, completions fill the window at the sent rate.
	const rate = 100.0
	before := time.Now()
	s := run(t, mode, context.Background(), srv.URL()+"/knob?delay=300ms",
		Config{Rate: rate, Warmup: measure.Duration(500 * time.Millisecond), Duration: measure.Duration(time.Second)})
	if s.Elapsed.Duration() != time.Second {
		t.Errorf("window = %v, want 1s", s.Elapsed.Duration())
	}
	if d := s.Start.Sub(before); d < 500*time.Millisecond {
		t.Errorf("window starts %v after Run was called, want after the 500ms warmup", d)
	}
	// Requests sent from 0.2 s to 1.2 s complete in the window: about 100 (fewer when this
	// machine is too busy to keep the schedule; about 150 if the warmup's counted).
	if n := s.InWindow(); n < 60 || n > 110 {
		t.Errorf("%d responses in the window, want about 100 (warmup completions excluded)", n)
	}
	if s.Open == nil || s.Open.Scheduled != 100 {
		t.Errorf("scheduled %+v, want the 100 requests due inside the 1s window (not the warmup's)", s.Open)
	}
	if got := s.AttemptRate(); got < 0.6*rate {
		t.Errorf("achieved %.1f req/s, want about %v: a warmed-up window is in steady state", got, rate)
	}
	if len(s.Timeline) == 0 || s.Timeline[0].T != 0 || s.Timeline[0].Requests < 60 {
		t.Errorf("timeline %+v, want its first second to be the window's", s.Timeline)
	}
}

func TestWindowInterrupted(t *testing.T) {
	srv := startTarget(t, target.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	start := time.Now()
	var cancelled time.Time
	time.AfterFunc(300*time.Millisecond, func() { cancelled = time.Now(); cancel() })
	s := run(t, ioAuto, ctx, srv.URL()+"/knob?delay=5ms", Config{Duration: measure.Duration(10 * time.Second)})
	if el := s.Elapsed.Duration(); el <= 0 || el > cancelled.Sub(start) {
		t.Errorf("window = %v, want it to end at the interruption (%v after Run was called)", el, cancelled.Sub(start))
	}
}
