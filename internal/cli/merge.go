package cli

import (
	"context"
	"errors"
)

// cmdMerge is not written yet.
func cmdMerge(ctx context.Context, e *env, args []string) error {
	return errors.New("merge: not implemented yet")
}
