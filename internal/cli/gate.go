package cli

import (
	"context"
	"errors"
)

// cmdGate is not written yet.
func cmdGate(ctx context.Context, e *env, args []string) error {
	return errors.New("gate: not implemented yet")
}
