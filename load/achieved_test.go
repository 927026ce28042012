package load

import (
	"context"
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/target"
)

func TestOpenLoopAchievedIsSendRate(t *testing.T) { openIO(t, testOpenLoopAchievedIsSendRate) }

// testOpenLoopAchievedIsSendRate: a service that answers in 800 ms, loaded at 100 req/s for
// 1 s, receives 100 requests in the window, each on time; only the few sent in its first
// 200 ms are answered inside it. The achieved rate is the sends' (100/s), not the responses'
// that ended in the window (about 20/s).
func testOpenLoopAchievedIsSendRate(t *testing.T, mode ioMode) {
	srv := startTarget(t, target.Config{})
	s := run(t, mode, context.Background(), srv.URL()+"/knob?delay=800ms",
		Config{Rate: 100, Duration: measure.Duration(time.Second), Connections: 10})
	if s.Open == nil {
		t.Fatal("an open-loop step without its open-loop part")
	}
	t.Logf("sent %d in the window, %d attempts ended in it; achieved %.1f/s, attempts ended %.1f/s", s.Open.Sent, s.Attempts-s.Drained.Attempts, s.SendRate(), s.AttemptRate())
	if s.Open.Sent < 90 || s.Open.Sent > 101 || s.SendRate() < 90 || s.SendRate() > 101 {
		t.Errorf("sent %d in the window, achieved %.1f req/s; want about 100", s.Open.Sent, s.SendRate())
	}
	if s.AttemptRate() > 50 {
		t.Errorf("attempts ended in the window: %.1f/s; want well under the 100/s sent (the service takes 800 ms)", s.AttemptRate())
	}
	if s.Successes != 100 || s.Errors.Total() != 0 {
		t.Errorf("successes %d, errors %+v; want 100 and none", s.Successes, s.Errors)
	}
}
