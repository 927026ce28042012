package scenario

import "context"

// Bounded is implemented by a Source whose code may run without end (a Lua script): the
// engine hands it the context that bounds the run (cancelled on Ctrl-C, and at the end of
// the duration plus the timeout), and the source's calls return once it is done.
type Bounded interface {
	Bound(ctx context.Context)
}
