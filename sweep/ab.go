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
	Pairs int           // pairs the level may run (its cap)
	Step  *measure.Step // the measured step, labelled, Rep = Pair
}

// ABRun is what an interleaved A/B run measured: the steps of each side, pair i of a level
// being the steps with that level's label and Rep i. Order lists every step as it ran,
// e.g. "c=50#0 A", so a reader can check the interleaving.
type ABRun struct {
	A, B  []*measure.Step
	Order []string
	// Pairs is how many pairs each level ran; Looks how many times each was judged.
	Pairs []int
	Looks []int
}

// ABDecided says whether the pairs of a level measured so far settle its comparison (a
// regression proven, or every change proven within budget), so no more are needed.
type ABDecided func(level int, a, b []*measure.Step) bool

// ABSequence makes an A/B run sequential: after every Every pairs of a level, Decided
// judges them, and the level stops adding pairs when it says so or at Max pairs. The zero
// value runs plan.Reps() pairs per level without looking.
type ABSequence struct {
	Every   int // pairs between looks, the first look after as many; 0: plan.Reps()
	Max     int // at most this many pairs per level; 0: plan.Reps()
	Decided ABDecided
}

// Looks is how many times a level may be judged: after Every, 2 x Every, ... pairs and at
// Max. A test that is run at every look must share its significance level among them.
func (s ABSequence) Looks(plan Plan) int {
	every, most := s.bounds(plan)
	if s.Decided == nil {
		return 1
	}
	return (most + every - 1) / every
}

func (s ABSequence) bounds(plan Plan) (every, most int) {
	every, most = s.Every, s.Max
	if every <= 0 {
		every = plan.Reps()
	}
	if most <= 0 {
		most = plan.Reps()
	}
	return every, max(most, every)
}

// ABOrder is the order of the two sides in pair i: A first for even pairs, B first for odd
// ones (ABBA ABBA ...), so that neither side always runs first or always after a warm target.
func ABOrder(pair int) [2]string {
	if pair%2 == 1 {
		return [2]string{SideB, SideA}
	}
	return [2]string{SideA, SideB}
}

// RunAB runs an interleaved A/B comparison: for each level of plan, pairs of one step of a
// and one of b in ABOrder, each step under the same load (base at that level), after the
// same warmup on its own target; as many pairs as seq says (plan.Reps() when it is zero).
// It stops at the first error or when ctx ends, returning what was measured so far with
// the error; onStep, when not nil, sees every measured step as it finishes.
func RunAB(ctx context.Context, plan Plan, base load.Config, a, b StepFunc, seq ABSequence, onStep func(ABStep)) (*ABRun, error) {
	if err := plan.Validate(); err != nil {
		return nil, fmt.Errorf("a/b plan: %w", err)
	}
	defer useThreads(base)()
	every, most := seq.bounds(plan)
	if seq.Decided == nil {
		every, most = plan.Reps(), plan.Reps()
	}
	out := &ABRun{}
	run := map[string]StepFunc{SideA: a, SideB: b}
	for i := range plan.Len() {
		label := plan.Label(i)
		cfg := plan.Config(base, i)
		var la, lb []*measure.Step                                        // this level's steps
		out.Pairs, out.Looks = append(out.Pairs, 0), append(out.Looks, 1) // 1: the caller's final judgment
		for pair := 0; pair < most; pair++ {
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
					out.A, la = append(out.A, s), append(la, s)
				} else {
					out.B, lb = append(out.B, s), append(lb, s)
				}
				out.Order = append(out.Order, fmt.Sprintf("%s#%d %s", label, pair, side))
				if onStep != nil {
					onStep(ABStep{Side: side, Level: i, Pair: pair, Pairs: most, Step: s})
				}
			}
			out.Pairs[i] = pair + 1
			if seq.Decided != nil && (pair+1)%every == 0 && pair+1 < most {
				if seq.Decided(i, la, lb) {
					break // this look is the final judgment
				}
				out.Looks[i]++
			}
		}
	}
	return out, nil
}

// ABRecord is how the interleaved A/B run that a side's run belongs to was made; the runs
// of both sides carry it, so a saved pair of runs can be judged again the same way.
type ABRecord struct {
	ID    string `json:"id"`   // shared by the two runs of one comparison
	Side  string `json:"side"` // SideA or SideB
	Every int    `json:"every"`
	Max   int    `json:"max"`
	// Looks is how many times each level could be judged: every check's significance
	// level is shared among them.
	Looks int      `json:"looks"`
	Pairs []int    `json:"pairs"` // pairs each level ran
	Order []string `json:"order"` // every step as it ran, e.g. "c=4#0 A"
}
