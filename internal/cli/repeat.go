package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/report"
	"github.com/apiperf/apiperf/sweep"
)

// repeatFlags is --count: how many times each measurement is repeated, so that a gate or a
// diff compares samples, not single numbers.
type repeatFlags struct{ count int }

func (f *repeatFlags) register(fs *pflag.FlagSet) {
	f.count = 1
	fs.IntVar(&f.count, "count", 1, "repeat each measurement this many times (samples for apiperf gate; 5 or more for a statistical test)")
}

func (f *repeatFlags) validate() error {
	if f.count < 1 || f.count > 1000 {
		return usagef("--count %d: want 1 to 1000", f.count)
	}
	return nil
}

// repeat calls run count times and numbers the steps (Rep). It stops early, keeping what
// was measured, when ctx is cancelled.
func (f *repeatFlags) repeat(ctx context.Context, run func() (*measure.Step, error)) ([]*measure.Step, error) {
	var steps []*measure.Step
	for i := range max(f.count, 1) {
		if i > 0 && ctx.Err() != nil {
			break
		}
		s, err := run()
		if err != nil {
			return steps, err
		}
		s.Rep = i
		steps = append(steps, s)
	}
	return steps, nil
}

// printMedian writes one line with the level of repeated steps (nothing for one step): the
// same figures every report of the run shows (sweep.Reduce).
func printMedian(w io.Writer, steps []*measure.Step) {
	if len(steps) < 2 {
		return
	}
	l := sweep.Levels(steps)[0]
	fmt.Fprintf(w, "Level of %d repetitions: %.2f req/s (median), p99 %s (all responses), success %.2f%%\n", len(steps),
		l.QPS, report.FormatDuration(l.P99.Duration()), l.Success)
}
