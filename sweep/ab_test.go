package sweep

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
)

// fakeAB records every call of the two step functions in one log.
type fakeAB struct {
	log    []string
	failAt int // fail the call with this index (1-based); 0: never
	cancel func()
	stopAt int // cancel the context after this many calls
}

func (f *fakeAB) step(side string) StepFunc {
	return func(ctx context.Context, cfg load.Config) (*measure.Step, error) {
		f.log = append(f.log, side+":"+cfg.Duration.String()+":"+Label(false, float64(cfg.Connections)))
		if len(f.log) == f.failAt {
			return nil, errors.New("boom")
		}
		if len(f.log) == f.stopAt {
			f.cancel()
		}
		return &measure.Step{Concurrency: cfg.Connections}, nil
	}
}

func TestRunAB(t *testing.T) {
	base := load.Config{Connections: 1, Threads: 1, Duration: measure.Duration(time.Second), Timeout: measure.Duration(time.Second)}
	plan := Plan{Levels: []int{4, 8}, Count: 3, Warmup: measure.Duration(100 * time.Millisecond)}
	f := &fakeAB{}
	r, err := RunAB(context.Background(), plan, base, f.step(SideA), f.step(SideB), ABSequence{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Each step is preceded by its warmup on the same side; pairs go AB, BA, AB at each level.
	want := []string{
		"A:100ms:c=4", "A:1s:c=4", "B:100ms:c=4", "B:1s:c=4",
		"B:100ms:c=4", "B:1s:c=4", "A:100ms:c=4", "A:1s:c=4",
		"A:100ms:c=4", "A:1s:c=4", "B:100ms:c=4", "B:1s:c=4",
		"A:100ms:c=8", "A:1s:c=8", "B:100ms:c=8", "B:1s:c=8",
		"B:100ms:c=8", "B:1s:c=8", "A:100ms:c=8", "A:1s:c=8",
		"A:100ms:c=8", "A:1s:c=8", "B:100ms:c=8", "B:1s:c=8",
	}
	if !slices.Equal(f.log, want) {
		t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(f.log, " "), strings.Join(want, " "))
	}
	if len(r.A) != 6 || len(r.B) != 6 || r.A[4].Label != "c=8" || r.A[4].Rep != 1 || r.B[2].Rep != 2 {
		t.Errorf("A %d steps, B %d; A[4] %s rep %d, B[2] rep %d: want 6, 6, c=8 rep 1, rep 2", len(r.A), len(r.B), r.A[4].Label, r.A[4].Rep, r.B[2].Rep)
	}
	if got := strings.Join(r.Order[:4], ","); got != "c=4#0 A,c=4#0 B,c=4#1 B,c=4#1 A" {
		t.Errorf("Order starts %s", got)
	}
}

func TestRunABStops(t *testing.T) {
	base := load.Config{Connections: 1, Threads: 1, Duration: measure.Duration(time.Second), Timeout: measure.Duration(time.Second)}
	plan := Plan{Levels: []int{2}, Count: 4}
	// An error stops the run and keeps the steps measured before it.
	f := &fakeAB{failAt: 3}
	r, err := RunAB(context.Background(), plan, base, f.step(SideA), f.step(SideB), ABSequence{}, nil)
	if err == nil || !strings.Contains(err.Error(), "B c=2 pair 1: boom") || len(r.A)+len(r.B) != 2 {
		t.Errorf("RunAB with a failing 3rd step: %d+%d steps, err %v; want 2 steps and the error naming B c=2 pair 1", len(r.A), len(r.B), err)
	}
	// Cancelling ends the run without an error, keeping what was measured.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f = &fakeAB{cancel: cancel, stopAt: 5}
	var seen int
	r, err = RunAB(ctx, plan, base, f.step(SideA), f.step(SideB), ABSequence{}, func(ABStep) { seen++ })
	if err != nil || len(r.A)+len(r.B) != 5 || seen != 5 {
		t.Errorf("RunAB cancelled after 5 steps: %d+%d steps, %d seen, err %v; want 5, 5, nil", len(r.A), len(r.B), seen, err)
	}
	if _, err := RunAB(context.Background(), Plan{}, base, f.step(SideA), f.step(SideB), ABSequence{}, nil); err == nil {
		t.Error("RunAB with an empty plan: no error")
	}
}

func TestRunABSequential(t *testing.T) {
	base := load.Config{Connections: 1, Threads: 1, Duration: measure.Duration(time.Second), Timeout: measure.Duration(time.Second)}
	plan := Plan{Levels: []int{4, 8}, Count: 2}
	tests := []struct {
		name      string
		seq       ABSequence
		decideAt  map[int]int // level -> pairs at which Decided says yes
		wantPairs []int
		wantLooks []int
		wantAsked []string // level:pairs of every call of Decided
	}{
		// No Decided: plan.Reps() pairs, one judgment per level (the caller's).
		{"fixed", ABSequence{Every: 2, Max: 7}, nil, []int{2, 2}, []int{1, 1}, nil},
		// Never decided: looks after 2, 4 and 6 pairs, the cap of 7 ends the level; 4 looks in all.
		{"capped", ABSequence{Every: 2, Max: 7, Decided: func(int, []*measure.Step, []*measure.Step) bool { return false }},
			nil, []int{7, 7}, []int{4, 4}, []string{"0:2", "0:4", "0:6", "1:2", "1:4", "1:6"}},
		// Level 0 is settled at the second look, level 1 at the first.
		{"decided", ABSequence{Every: 2, Max: 6}, map[int]int{0: 4, 1: 2}, []int{4, 2}, []int{2, 1}, []string{"0:2", "0:4", "1:2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asked []string
			if tt.decideAt != nil {
				tt.seq.Decided = func(level int, a, b []*measure.Step) bool {
					asked = append(asked, fmt.Sprintf("%d:%d", level, len(a)))
					if len(a) != len(b) {
						t.Errorf("Decided got %d A and %d B steps", len(a), len(b))
					}
					return len(a) == tt.decideAt[level]
				}
			} else if tt.seq.Decided != nil {
				d := tt.seq.Decided
				tt.seq.Decided = func(level int, a, b []*measure.Step) bool {
					asked = append(asked, fmt.Sprintf("%d:%d", level, len(a)))
					return d(level, a, b)
				}
			}
			f := &fakeAB{}
			r, err := RunAB(context.Background(), plan, base, f.step(SideA), f.step(SideB), tt.seq, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(r.Pairs, tt.wantPairs) || !slices.Equal(r.Looks, tt.wantLooks) || !slices.Equal(asked, tt.wantAsked) {
				t.Errorf("RunAB(%+v): pairs %v, looks %v, asked %v; want %v, %v, %v", tt.seq, r.Pairs, r.Looks, asked, tt.wantPairs, tt.wantLooks, tt.wantAsked)
			}
			if n := tt.wantPairs[0] + tt.wantPairs[1]; len(r.A) != n || len(r.B) != n {
				t.Errorf("%d A and %d B steps, want %d each", len(r.A), len(r.B), n)
			}
			if tt.seq.Decided != nil {
				if got, want := tt.seq.Looks(plan), (tt.seq.Max+1)/2; got != want {
					t.Errorf("Looks = %d, want %d", got, want)
				}
			}
		})
	}
}
