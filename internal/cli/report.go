package cli

import (
	"context"
	"errors"
)

// cmdReport is not written yet.
func cmdReport(ctx context.Context, e *env, args []string) error {
	return errors.New("report: not implemented yet")
}
