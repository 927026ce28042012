//go:build !linux

package load

import "context"

// clock is Linux-only (a timerfd); elsewhere open-loop workers wait on Go timers.
type clock struct{}

func newClock(*engine) *clock { return nil }

func (c *clock) close() {}

func (c *clock) wait(context.Context, int64, chan struct{}) bool { return true }
