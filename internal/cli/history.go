package cli

import (
	"context"
	"errors"
)

// cmdHistory is not written yet.
func cmdHistory(ctx context.Context, e *env, args []string) error {
	return errors.New("history: not implemented yet")
}
