package cli

import (
	"context"
	"errors"

	"github.com/spf13/pflag"

	"github.com/apiperf/apiperf/result"
)

// historyFlags say where and how runs are recorded in the history database.
type historyFlags struct{}

func (f *historyFlags) register(fs *pflag.FlagSet) {}

// record adds a finished run to the history database.
func (f *historyFlags) record(ctx context.Context, e *env, r *result.Run) error { return nil }

func cmdHistory(ctx context.Context, e *env, args []string) error {
	return errors.New("history: not implemented yet")
}
