package cli

import (
	"context"
	"errors"
)

// cmdSweep is not written yet.
func cmdSweep(ctx context.Context, e *env, args []string) error {
	return errors.New("sweep: not implemented yet")
}
