package store

import (
	"context"
	"slices"

	"github.com/apiperf/apiperf/result"
)

// Similar returns up to max of the newest runs that f selects and that measured the same
// experiment as cur (its Identity), cur itself left out, oldest first: the history from
// which a gate learns how much runs of unchanged code differ.
func (d *DB) Similar(ctx context.Context, f Filter, cur *result.Run, max int) ([]*result.Run, error) {
	f.Limit, f.ID = 0, 0
	runs, err := d.List(ctx, f)
	if err != nil {
		return nil, err
	}
	want, curKey := IdentityOf(cur), Key(cur)
	var out []*result.Run
	for i := len(runs) - 1; i >= 0 && len(out) < max; i-- {
		e := &runs[i]
		if e.URL != want.URL || e.Method != want.Method {
			continue
		}
		r, err := d.Run(ctx, e.ID)
		if err != nil {
			return nil, err
		}
		if Key(r) != curKey && IdentityOf(r) == want {
			out = append(out, r)
		}
	}
	slices.Reverse(out)
	return out, nil
}
