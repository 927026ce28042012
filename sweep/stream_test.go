package sweep

import (
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
)

// TestStreamObjective: an objective bounds the streams' time to first message and gaps,
// pooled over a level's repetitions, and never passes a level without streams.
func TestStreamObjective(t *testing.T) {
	o, err := ParseObjective("first_p99<=150ms,gap_p50<=20ms")
	if err != nil {
		t.Fatal(err)
	}
	step := func(first time.Duration) *measure.Step {
		s := &measure.Step{Label: "c=4", Attempts: 10, Requests: 10, Successes: 10, Latency: measure.NewHistogram()}
		s.Latency.RecordN(time.Second, 10)
		s.Streams = &measure.Streams{Kind: "grpc", Streams: 10, Messages: 50, First: measure.NewHistogram(), Gap: measure.NewHistogram()}
		s.Streams.First.RecordN(first, 10)
		s.Streams.Gap.RecordN(10*time.Millisecond, 40)
		return s
	}
	for _, c := range []struct {
		steps []*measure.Step
		miss  string // "" when met
	}{
		{[]*measure.Step{step(100 * time.Millisecond)}, ""},                                                      // both met
		{[]*measure.Step{step(100 * time.Millisecond), step(300 * time.Millisecond)}, "first_p99 300ms > 150ms"}, // pooled: the slow repetition counts
		{[]*measure.Step{{Label: "c=4", Attempts: 1, Requests: 1, Latency: measure.NewHistogram()}}, "first_p99: no streamed responses"},
	} {
		l := Reduce("c=4", 4, false, c.steps, seq(len(c.steps)))
		misses := strings.Join(o.Misses(l), "; ")
		if (c.miss == "") != (misses == "") || !strings.Contains(misses, c.miss) {
			t.Errorf("Misses(%d repetitions) = %q; want %q", len(c.steps), misses, c.miss)
		}
	}
	if l := Reduce("c=4", 4, false, []*measure.Step{step(100 * time.Millisecond)}, []int{0}); l.Stream == nil || l.Stream.Messages != 50 || l.Stream.GapP50.Duration() < 10*time.Millisecond {
		t.Errorf("level stream %+v; want 50 messages, gap p50 about 10ms", l.Stream)
	}
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
