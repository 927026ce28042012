package target

import (
	"errors"
	"fmt"
	"time"
)

// StallSchedule is the server-wide stall: measured from Start (when the server began
// listening), every response that would be written at a time t in [Start+k*Every,
// Start+k*Every+Stall), for k = 0, 1, 2..., is held until Start+k*Every+Stall.
// So the first stall begins as the server starts. The zero value never stalls.
type StallSchedule struct {
	Start time.Time     // time zero of the schedule
	Stall time.Duration // length of each stall
	Every time.Duration // period: one stall starts every Every
}

// Validate reports a schedule that is not usable.
func (s StallSchedule) Validate() error {
	var errs []error
	if s.Stall < 0 || s.Every < 0 {
		errs = append(errs, fmt.Errorf("stall %v and stall-every %v must not be negative", s.Stall, s.Every))
	}
	if s.Stall > 0 && s.Every == 0 {
		errs = append(errs, errors.New("stall needs stall-every"))
	}
	if s.Stall > 0 && s.Every > 0 && s.Stall >= s.Every {
		errs = append(errs, fmt.Errorf("stall %v must be shorter than stall-every %v", s.Stall, s.Every))
	}
	if s.Stall == 0 && s.Every > 0 {
		errs = append(errs, errors.New("stall-every needs stall"))
	}
	return errors.Join(errs...)
}

// Active reports whether the schedule ever stalls.
func (s StallSchedule) Active() bool { return s.Stall > 0 && s.Every > s.Stall }

// Release returns when a response due at t may be written: t itself outside a stall,
// the end of the stall when t falls inside one.
func (s StallSchedule) Release(t time.Time) time.Time {
	if !s.Active() || t.Before(s.Start) {
		return t
	}
	since := t.Sub(s.Start)
	periodStart := since - since%s.Every
	if since-periodStart < s.Stall {
		return s.Start.Add(periodStart + s.Stall)
	}
	return t
}

// String describes the schedule, e.g. "stall 500ms every 5s".
func (s StallSchedule) String() string {
	if !s.Active() {
		return "no stall"
	}
	return fmt.Sprintf("stall %v every %v", s.Stall, s.Every)
}
