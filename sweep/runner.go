package sweep

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
)

// StepInfo says which step of the plan a runner is about to run: for progress lines and for
// what runs alongside a step (a profile capture). What the step measured is a measure.Step.
type StepInfo struct {
	Label  string      // the level's label
	Level  int         // index of the level (or probe), from 0
	Levels int         // levels in the plan; 0 when unknown (a capacity search)
	Rep    int         // repetition, from 0
	Reps   int         // repetitions of the level
	Warmup bool        // the unmeasured load before a level
	Config load.Config // the load of the step
}

// Name is the step as a progress line names it: "c=50", "c=50 run 2/3" or "c=50 warmup".
func (i StepInfo) Name() string {
	switch {
	case i.Warmup:
		return i.Label + " warmup"
	case i.Reps > 1:
		return fmt.Sprintf("%s run %d/%d", i.Label, i.Rep+1, i.Reps)
	}
	return i.Label
}

// Hook is called before every step a runner runs; the function it returns (nil for none)
// is called when the step has ended, with the step (nil after a failed step or a warmup).
type Hook func(ctx context.Context, info StepInfo) func(*measure.Step)

// Runner runs the levels of a sweep, driven by a step function: the engine in the CLI, a
// fake in tests. Its zero hooks do nothing.
type Runner struct {
	Base load.Config // the load of every step; the plan sets its connections or rate
	Step StepFunc
	Hook Hook
	// Save is called after every measured step, the record refreshed (e.g. to save
	// run.json); an error ends the sweep with it.
	Save func(steps []*measure.Step) error
	// FileLimit checks, before a level, that its connections can be opened (nil: no check).
	FileLimit func(conns int) error
}

// Run measures every level of rec's plan, Count times each after its warmup, until a stop
// rule fires or ctx ends, refreshing rec after every step; why it stopped early is
// rec.Stop. It returns the measured steps, labelled and numbered (Rep); after an error,
// with the steps so far. A step interrupted by ctx is kept, with a warning.
func (r Runner) Run(ctx context.Context, rec *Record) ([]*measure.Step, error) {
	defer useThreads(r.Base)()
	plan := rec.Plan
	var steps []*measure.Step
	for i := range plan.Len() {
		label := plan.Label(i)
		if ctx.Err() != nil {
			rec.Stop = Interrupted(rec.Levels, label)
			break
		}
		if rec.Rules.FileLimit && r.FileLimit != nil {
			if err := r.FileLimit(plan.Connections(r.Base, i)); err != nil {
				if len(rec.Levels) == 0 {
					return steps, err
				}
				why := errors.Unwrap(err)
				if why == nil {
					why = err
				}
				rec.Stop = FileLimitStop(rec.Levels, label, why)
				break
			}
		}
		info := StepInfo{Label: label, Level: i, Levels: plan.Len(), Reps: plan.Reps()}
		if wcfg, ok := plan.WarmupConfig(r.Base, i); ok {
			w := info
			w.Warmup, w.Config = true, wcfg
			if _, err := r.step(ctx, w); err != nil {
				return steps, fmt.Errorf("warming up %s: %w", label, err)
			}
			if ctx.Err() != nil {
				rec.Stop = Interrupted(rec.Levels, label)
				break
			}
		}
		info.Config = plan.Config(r.Base, i)
		for rep := range plan.Reps() {
			info.Rep = rep
			s, err := r.step(ctx, info)
			if err != nil {
				return steps, fmt.Errorf("%s: %w", label, err)
			}
			steps = append(steps, s)
			rec.Analyze(steps)
			if r.Save != nil {
				if err := r.Save(steps); err != nil {
					return steps, err
				}
			}
			if ctx.Err() != nil {
				rec.Stop = Interrupted(rec.Levels, label)
				break
			}
		}
		if rec.Stop == nil && i < plan.Len()-1 {
			rec.Stop = GeneratorLimitStop(rec.Levels, label)
		}
		if rec.Stop != nil || i == plan.Len()-1 {
			break // after the last level nothing is left to spare: the rules stop only before a level
		}
		if st := rec.Rules.After(rec.Levels); st != nil {
			rec.Stop = st
			break
		}
	}
	return steps, nil
}

// step runs one step with the hook around it and labels what it measured.
func (r Runner) step(ctx context.Context, info StepInfo) (*measure.Step, error) {
	return runStep(ctx, r.Step, r.Hook, info)
}

// runStep runs one step of a runner: the hook around it, the label, the repetition, and a
// warning when ctx ended before the step's planned duration. A warmup's step is returned
// unlabelled: it is not measured, only read for whether the target could be reached.
func runStep(ctx context.Context, step StepFunc, hook Hook, info StepInfo) (*measure.Step, error) {
	var done func(*measure.Step)
	if hook != nil {
		done = hook(ctx, info)
	}
	s, err := step(ctx, info.Config)
	if err == nil && s == nil {
		err = errors.New("the step function returned no step")
	}
	if err != nil || info.Warmup {
		if done != nil {
			done(nil)
		}
		if err != nil {
			return nil, err
		}
		return s, nil // a warmup's step says only whether the target could be reached
	}
	s.Label, s.Rep = info.Label, info.Rep
	if ctx.Err() != nil {
		s.Warnings = append(s.Warnings, fmt.Sprintf("interrupted: measured %v of the planned %v",
			s.Elapsed.Duration().Round(time.Millisecond), info.Config.Duration))
	}
	if done != nil {
		done(s)
	}
	return s, nil
}

// Native runs the levels rec measured against another target (the built-in plain net/http
// one, through step), with rec's objective and rules, and sets rec.VsNative to the
// comparison of both peaks. It returns the native record and steps; an error when the
// native run has no peak to compare with.
func (r Runner) Native(ctx context.Context, rec *Record, step StepFunc) (*Record, []*measure.Step, error) {
	nat := NewRecord(rec.Plan.Truncate(len(rec.Levels)), rec.Objective, rec.Rules)
	nr := r
	nr.Step, nr.Hook = step, nil // what runs alongside steps watches the user's target, not this one
	steps, err := nr.Run(ctx, nat)
	if err != nil {
		return nat, steps, err
	}
	c, ok := Compare(rec.Levels, rec.Peak, nat.Levels, nat.Peak)
	if !ok {
		return nat, steps, errors.New("the plain net/http run has no peak to compare with")
	}
	rec.VsNative = &c
	return nat, steps, nil
}

// Repeat runs the load cfg count times (at least once), labelling the steps with cfg's level
// and numbering them (Rep). It stops early, keeping what was measured, when ctx ends; after
// an error it returns the steps so far with it.
func Repeat(ctx context.Context, cfg load.Config, count int, step StepFunc, hook Hook) ([]*measure.Step, error) {
	defer useThreads(cfg)()
	info := StepInfo{Label: ConfigLabel(cfg), Levels: 1, Reps: max(count, 1), Config: cfg}
	var steps []*measure.Step
	for i := range max(count, 1) {
		if i > 0 && ctx.Err() != nil {
			break
		}
		info.Rep = i
		s, err := runStep(ctx, step, hook, info)
		if err != nil {
			return steps, err
		}
		steps = append(steps, s)
	}
	return steps, nil
}

// ConfigLabel is the label of a load's level: its rate in open loop, else its connections.
func ConfigLabel(cfg load.Config) string {
	if cfg.OpenLoop() {
		return Label(true, cfg.Rate)
	}
	return Label(false, float64(cfg.Connections))
}

// useThreads gives the Go scheduler as many OS threads as the load has engine threads and
// returns the function that restores the previous setting: every runner sets it here, once.
func useThreads(cfg load.Config) func() {
	if cfg.Threads < 1 {
		return func() {}
	}
	prev := runtime.GOMAXPROCS(cfg.Threads)
	return func() { runtime.GOMAXPROCS(prev) }
}

// Hooks combines hooks into one: each is called in order before a step, their returned
// functions in reverse order after it. Nil hooks are skipped.
func Hooks(hooks ...Hook) Hook {
	return func(ctx context.Context, info StepInfo) func(*measure.Step) {
		var dones []func(*measure.Step)
		for _, h := range hooks {
			if h == nil {
				continue
			}
			if d := h(ctx, info); d != nil {
				dones = append(dones, d)
			}
		}
		return func(s *measure.Step) {
			for i := len(dones) - 1; i >= 0; i-- {
				dones[i](s)
			}
		}
	}
}
