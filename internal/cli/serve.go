package cli

import (
	"context"
	"errors"
)

// cmdServe is not written yet.
func cmdServe(ctx context.Context, e *env, args []string) error {
	return errors.New("serve: not implemented yet")
}
