package cli

import (
	"context"
	"errors"
)

// cmdDiff is not written yet.
func cmdDiff(ctx context.Context, e *env, args []string) error {
	return errors.New("diff: not implemented yet")
}
