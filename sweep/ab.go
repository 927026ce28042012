package sweep

import (
	"context"
	"fmt"

	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
)

// StepFunc runs one load and returns its measured step: the real engine in the CLI, a fake
// in tests.
type StepFunc func(ctx context.Context, cfg load.Config) (*measure.Step, error)

// Sides of an interleaved A/B run.
const (
	SideA = "A"
	SideB = "B"
)

// ABStep is one finished step of an A/B run, as passed to the progress callback.
type ABStep struct {
	Side  string        // SideA or SideB
	Level int           // index into the plan's levels
	Pair  int           // pair number at that level, from 0
	Step  *measure.Step // the measured step, labelled, Rep = Pair
}

// ABRun is what an interleaved A/B run measured: the steps of each side, pair i of a level
// being the steps with that level's label and Rep i. Order lists every step as it ran,
// e.g. "c=50#0 A", so a reader can check the interleaving.
type ABRun struct {
	A, B  []*measure.Step
	Order []string
}

// ABOrder is the order of the two sides in pair i: A first for even pairs, B first for odd
// ones (ABBA ABBA ...), so that neither side always runs first or always after a warm target.
func ABOrder(pair int) [2]string {
	if pair%2 == 1 {
		return [2]string{SideB, SideA}
	}
	return [2]string{SideA, SideB}
}

// RunAB runs an interleaved A/B comparison: for each level of plan, Count pairs, each pair
// one step of a and one of b in ABOrder, each step under the same load (base at that
// level), after the same warmup on its own target. It stops at the first error or when ctx
// ends, returning what was measured so far with the error; onStep, when not nil, sees every
// measured step as it finishes.
func RunAB(ctx context.Context, plan Plan, base load.Config, a, b StepFunc, onStep func(ABStep)) (*ABRun, error) {
	if err := plan.Validate(); err != nil {
		return nil, fmt.Errorf("a/b plan: %w", err)
	}
	defer useThreads(base)()
	out := &ABRun{}
	run := map[string]StepFunc{SideA: a, SideB: b}
	for i := range plan.Len() {
		label := plan.Label(i)
		cfg := plan.Config(base, i)
		for pair := range plan.Reps() {
			for _, side := range ABOrder(pair) {
				if ctx.Err() != nil {
					return out, nil // interrupted: keep what was measured
				}
				if wcfg, ok := plan.WarmupConfig(base, i); ok {
					if _, err := run[side](ctx, wcfg); err != nil {
						return out, fmt.Errorf("%s %s warmup: %w", side, label, err)
					}
				}
				s, err := run[side](ctx, cfg)
				if err != nil {
					return out, fmt.Errorf("%s %s pair %d: %w", side, label, pair, err)
				}
				s.Label, s.Rep = label, pair
				if side == SideA {
					out.A = append(out.A, s)
				} else {
					out.B = append(out.B, s)
				}
				out.Order = append(out.Order, fmt.Sprintf("%s#%d %s", label, pair, side))
				if onStep != nil {
					onStep(ABStep{Side: side, Level: i, Pair: pair, Step: s})
				}
			}
		}
	}
	return out, nil
}
