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
// 1 s, receives 100 requests in the window, each on time (when the generator keeps up); only the few sent in its first
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
	// A generator short of CPU (this busy machine) may send fewer in the window: the step
	// then says its sends were late, and what it did not send is not sent after the window.
	if s.Open.Sent < 90 || s.Open.Sent > 101 || s.SendRate() < 90 || s.SendRate() > 101 {
		if s.Open.LateSends*10 < s.Open.Scheduled {
			t.Errorf("sent %d in the window, achieved %.1f req/s; want about 100", s.Open.Sent, s.SendRate())
		} else {
			t.Logf("sent %d of %d in the window, but %d sends were late: the machine is short of CPU", s.Open.Sent, s.Open.Scheduled, s.Open.LateSends)
		}
	}
	if s.AttemptRate() > 50 {
		t.Errorf("attempts ended in the window: %.1f/s; want well under the 100/s sent (the service takes 800 ms)", s.AttemptRate())
	}
	if s.Successes != s.Open.Sent || s.Errors.Total() != 0 {
		t.Errorf("successes %d, errors %+v; want one for each of the %d sent, and none", s.Successes, s.Errors, s.Open.Sent)
	}
}
