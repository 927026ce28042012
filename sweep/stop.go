package sweep

import (
	"fmt"
	"strings"
)

// Rules that stop a sweep early, as Stop.Rule names them.
const (
	RuleSuccess     = "success"     // a level's success rate fell below the floor
	RuleDecline     = "decline"     // levels in a row had a QPS below the best so far
	RuleFileLimit   = "file-limit"  // the next level needs more connections than can be opened
	RuleInterrupted = "interrupted" // the user stopped the sweep (Ctrl-C)
	// RuleGeneratorLimit: a level hit a limit of apiperf's own machine (local ports, file
	// descriptors); larger levels would measure the generator, not the target. Always on.
	RuleGeneratorLimit = "generator-limit"
)

// Rules say when a sweep stops before its last level, so a machine is not hammered for
// nothing. The zero value never stops early.
type Rules struct {
	// MinSuccess stops after a level whose success rate (percent) is below it; 0: off.
	MinSuccess float64 `json:"min_success,omitempty"`
	// MaxDeclines stops after this many levels in a row whose QPS is below the best so far; 0: off.
	MaxDeclines int `json:"max_declines,omitempty"`
	// FileLimit stops before a level that needs more connections than the process may open.
	FileLimit bool `json:"file_limit,omitempty"`
}

// DefaultRules are the rules of a sweep unless turned off.
var DefaultRules = Rules{MinSuccess: 50, MaxDeclines: 2, FileLimit: true}

// Validate reports every problem at once.
func (r Rules) Validate() error {
	var errs []string
	if r.MinSuccess < 0 || r.MinSuccess > 100 {
		errs = append(errs, fmt.Sprintf("success floor must be in [0, 100]%%, got %g%%", r.MinSuccess))
	}
	if r.MaxDeclines < 0 {
		errs = append(errs, fmt.Sprintf("declining levels must not be negative, got %d", r.MaxDeclines))
	}
	if len(errs) > 0 {
		return fmt.Errorf("stop rules: %s", strings.Join(errs, "; "))
	}
	return nil
}

// String describes the rules in one line, e.g. "stop below 50% success, after 2 declining
// levels, before the open-file limit".
func (r Rules) String() string {
	var parts []string
	if r.MinSuccess > 0 {
		parts = append(parts, "below "+pct(r.MinSuccess)+"% success")
	}
	if r.MaxDeclines > 0 {
		parts = append(parts, fmt.Sprintf("after %d declining levels", r.MaxDeclines))
	}
	if r.FileLimit {
		parts = append(parts, "before the open-file limit")
	}
	if len(parts) == 0 {
		return "no early stop"
	}
	return "stop " + strings.Join(parts, ", ")
}

// Stop records why a sweep ended before its last level.
type Stop struct {
	Rule   string `json:"rule"`   // RuleSuccess, RuleDecline, RuleFileLimit or RuleInterrupted
	After  string `json:"after"`  // the last level measured ("" when none was)
	Reason string `json:"reason"` // one line saying what fired, with the numbers
}

// String is the line shown when the stop fires.
func (s Stop) String() string { return "stopped: " + s.Reason }

// After checks the rules once a level has been measured; points are the levels so far, in
// order. It returns nil when the sweep goes on.
func (r Rules) After(points []Level) *Stop {
	if len(points) == 0 {
		return nil
	}
	last := points[len(points)-1]
	if r.MinSuccess > 0 && last.Success < r.MinSuccess {
		return &Stop{Rule: RuleSuccess, After: last.Label,
			Reason: fmt.Sprintf("success rate %s%% at %s is below the %s%% floor (turn off with --min-success 0)", pctNear(last.Success, r.MinSuccess), last.Label, pct(r.MinSuccess))}
	}
	if r.MaxDeclines > 0 {
		declines, best := 0, -1
		for i, p := range points {
			if best >= 0 && p.QPS < points[best].QPS {
				declines++
			} else {
				declines = 0
			}
			if best < 0 || p.QPS > points[best].QPS {
				best = i
			}
		}
		if declines >= r.MaxDeclines {
			return &Stop{Rule: RuleDecline, After: last.Label,
				Reason: fmt.Sprintf("QPS stayed below the best (%s req/s at %s) for %s in a row (turn off with --max-declines 0)",
					FormatQPS(points[best].QPS), points[best].Label, levelCount(declines))}
		}
	}
	return nil
}

// FileLimitStop is the stop before level next, which needs more connections than the process
// may open (why says so, with the limit); points are the levels measured so far.
func FileLimitStop(points []Level, next string, why error) *Stop {
	s := &Stop{Rule: RuleFileLimit,
		Reason: fmt.Sprintf("before %s: %v (or turn this rule off with --no-file-limit-stop)", next, why)}
	if len(points) > 0 {
		s.After = points[len(points)-1].Label
	}
	return s
}

// Interrupted is the stop when the user cancels the sweep during or before level current.
func Interrupted(points []Level, current string) *Stop {
	s := &Stop{Rule: RuleInterrupted, Reason: fmt.Sprintf("interrupted during %s", current)}
	if len(points) > 0 {
		s.After = points[len(points)-1].Label
	}
	return s
}

// GeneratorLimitStop is the stop after level label (one of points) when it hit a limit of
// apiperf's own machine; nil when it did not.
func GeneratorLimitStop(points []Level, label string) *Stop {
	for _, l := range points {
		if l.Label == label && l.GeneratorLimited() {
			return &Stop{Rule: RuleGeneratorLimit, After: l.Label,
				Reason: fmt.Sprintf("%s hit the generator's own limit, so larger levels would measure apiperf's machine: %s", l.Label, l.GeneratorLimit)}
		}
	}
	return nil
}

// levelCount is "1 level" or "n levels".
func levelCount(n int) string {
	if n == 1 {
		return "1 level"
	}
	return fmt.Sprintf("%d levels", n)
}
