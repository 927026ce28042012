package lua

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// DefaultLoadBudget bounds each load-time phase of a script: its top level, setup, init and
// the first request() of a thread. A script still running then fails with a clear message.
const DefaultLoadBudget = 3 * time.Second

// loadCtx is the context of one load-time phase: the load budget, within the process's
// context (Ctrl-C).
func (s *Source) loadCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(s.base, s.budget)
}

// runCtx is what the thread states run under between load phases: the run's bound once the
// engine gave one, else the process's context.
func (s *Source) runContext() context.Context {
	if s.run != nil {
		return s.run
	}
	return s.base
}

// Bound implements scenario.Bounded: from now on every callback of the thread states runs
// under ctx, so a request(), response() or delay() that never returns ends with the run.
func (s *Source) Bound(ctx context.Context) {
	ctx, cancel := context.WithCancelCause(ctx)
	context.AfterFunc(s.base, func() { cancel(context.Cause(s.base)) }) // the memory watch
	s.mainMu.Lock()
	s.run = ctx
	threads := append([]*thread(nil), s.threads...)
	s.mainMu.Unlock()
	for _, t := range threads {
		if t == nil {
			continue
		}
		t.mu.Lock()
		if t.L != nil {
			t.L.SetContext(ctx)
		}
		t.mu.Unlock()
	}
}

// overBudget says why a Lua call stopped when its context ended, or returns err as is.
func (s *Source) overBudget(ctx context.Context, what string, err error) error {
	if m := memoryCause(s.base); m != nil {
		return m
	}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("script %s: %s still running after %v (an endless loop?); stopped", s.name, what, s.budget)
	case ctx.Err() != nil:
		return fmt.Errorf("script %s: %s interrupted", s.name, what)
	}
	return err
}

// ended reports whether the thread's calls stop because the run is over (not a script error).
func (t *thread) ended() bool {
	if t.L == nil {
		return true
	}
	ctx := t.L.Context()
	return ctx != nil && ctx.Err() != nil
}
