package load

import (
	"context"

	"github.com/apiperf/apiperf/scenario"
)

// bound gives a source whose code may run without end (a script) the run's bound: the run's
// context (Ctrl-C), ended at the duration plus the timeout, when in-flight requests are
// abandoned anyway. So -d and --timeout bound the run whatever a script does.
func bound(ctx context.Context, cfg Config, src scenario.Source) context.CancelFunc {
	b, ok := src.(scenario.Bounded)
	if !ok {
		return func() {}
	}
	cancel := context.CancelFunc(func() {})
	if d := cfg.Duration.Duration(); d > 0 {
		ctx, cancel = context.WithTimeout(ctx, d+cfg.Timeout.Duration())
	}
	b.Bound(ctx)
	return cancel
}
