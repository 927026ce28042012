package cli

import (
	"context"
	"errors"
)

func cmdRun(ctx context.Context, e *env, args []string) error {
	return errors.New("run: not implemented yet")
}
