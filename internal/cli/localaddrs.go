package cli

import (
	"context"
	"fmt"

	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/scenario"
)

// planLocalAddrs states the source addresses the largest load cfg opens its connections from
// (a line when apiperf binds them, a note when they cannot hold its connections), before
// any traffic; local addresses of the wrong family are bad input (exit 2).
func planLocalAddrs(ctx context.Context, e *env, cfg load.Config, t scenario.Target, quiet bool) error {
	p, err := load.LocalAddrsFor(ctx, cfg, t)
	if err != nil {
		return asUsage(err)
	}
	if quiet {
		return nil
	}
	if s := p.String(); s != "" {
		fmt.Fprintf(e.stderr, "apiperf: %s\n", s)
	}
	if p.Note != "" {
		fmt.Fprintf(e.stderr, "apiperf: note: %s\n", p.Note)
	}
	return nil
}
