package load

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/target"
)

// deadURL is a loopback address nothing listens on.
func deadURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/"
}

func TestUnreachableStopsEarly(t *testing.T) {
	eachIO(t, func(t *testing.T, mode ioMode) { testUnreachable(t, mode, Config{}) })
	t.Run("open loop evloop", func(t *testing.T) { testUnreachable(t, ioEvloop, Config{Rate: 200}) })
	t.Run("open loop goroutines", func(t *testing.T) { testUnreachable(t, ioGoroutines, Config{Rate: 200}) })
}

// testUnreachable: finding 6 of issue 12. A target that refuses every connection stops the
// run after DefaultConnectGrace, with the reason in a warning, instead of hammering it for
// the whole duration.
func testUnreachable(t *testing.T, mode ioMode, cfg Config) {
	cfg.Duration = 30e9
	start := time.Now()
	url := deadURL(t)
	s := run(t, mode, context.Background(), url, cfg)
	took := time.Since(start)
	// Well before the 30s duration (within a second of the grace is TestTimingConnectGrace's).
	if took > 15*time.Second {
		t.Errorf("Run against %s took %v; want a stop after the %v grace", url, took, DefaultConnectGrace)
	}
	want := UnreachablePrefix + strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/") + ": connection refused"
	if !strings.Contains(strings.Join(s.Warnings, "\n"), want) || s.Successes != 0 {
		t.Errorf("warnings %q, successes %d; want %q and none", s.Warnings, s.Successes, want)
	}
	if err := s.Err(); !errors.Is(err, measure.ErrUnreachable) || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Err() = %v; want measure.ErrUnreachable saying %q", err, want)
	}
}

// A reachable target is not stopped by the watch, even when it answers nothing in time.
func TestReachableIsNotStopped(t *testing.T) {
	srv := startTarget(t, target.Config{Delay: 1500 * time.Millisecond})
	s := run(t, ioAuto, context.Background(), srv.URL()+"/", Config{Duration: 2e9, Connections: 2})
	for _, w := range s.Warnings {
		if strings.HasPrefix(w, UnreachablePrefix) {
			t.Errorf("warning %q for a target that accepts connections", w)
		}
	}
	if err := s.Err(); err != nil {
		t.Errorf("Err() = %v for a target that accepts connections; want nil", err)
	}
}

// A run shorter than the grace (a warmup) against a dead port is checked at its end and
// carries the typed failure too: capacity gives up on it by Err, not by the warning's text.
func TestUnreachableShortRunFails(t *testing.T) {
	url := deadURL(t)
	s := run(t, ioAuto, context.Background(), url, Config{Duration: measure.Duration(DefaultConnectGrace / 4)})
	if err := s.Err(); !errors.Is(err, measure.ErrUnreachable) {
		t.Errorf("Err() = %v, warnings %q; want measure.ErrUnreachable", err, s.Warnings)
	}
}
