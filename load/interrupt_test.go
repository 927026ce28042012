package load

import (
	"context"
	"testing"
	"time"

	"github.com/apiperf/apiperf/target"
)

// A step cut short by Ctrl-C says so (Step.Interrupted), so a sweep never makes it the peak
// or the knee; a step that ran its course does not.
func TestStepInterrupted(t *testing.T) {
	srv := startTarget(t, target.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	if s := run(t, ioAuto, ctx, srv.URL()+"/", Config{Duration: 5e9, Connections: 2}); !s.Interrupted {
		t.Error("a step cancelled after 200ms of 5s is not marked interrupted")
	}
	if s := run(t, ioAuto, context.Background(), srv.URL()+"/", Config{Requests: 20}); s.Interrupted {
		t.Error("a step that sent its 20 requests is marked interrupted")
	}
}
