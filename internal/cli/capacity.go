package cli

import (
	"context"
	"errors"
)

// cmdCapacity is not written yet.
func cmdCapacity(ctx context.Context, e *env, args []string) error {
	return errors.New("capacity: not implemented yet")
}
