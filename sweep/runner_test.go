package sweep

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
)

// target is a fake step function: at each level (concurrency or rate) it serves the QPS,
// success rate and latency that shape gives, for the load's duration, in the synctest
// bubble's fake time (so a step "takes" its duration and an interrupt lands exactly).
type target struct {
	shape func(level float64, call int) (qps, success float64, lat time.Duration)
	calls []string // the steps it ran, e.g. "c=10 1s"
}

func (f *target) step(ctx context.Context, cfg load.Config) (*measure.Step, error) {
	level := float64(cfg.Connections)
	if cfg.OpenLoop() {
		level = cfg.Rate
	}
	f.calls = append(f.calls, fmt.Sprintf("%s %v", ConfigLabel(cfg), cfg.Duration))
	d := cfg.Duration.Duration()
	start := time.Now()
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
	elapsed := time.Since(start)
	qps, success, lat := f.shape(level, len(f.calls))
	n := int64(qps * elapsed.Seconds())
	ok := int64(float64(n) * success / 100)
	h := measure.NewHistogram()
	h.RecordN(lat, n)
	s := &measure.Step{Concurrency: cfg.Connections, Elapsed: measure.Duration(elapsed), Attempts: n, Requests: n, Successes: ok,
		Errors: measure.Errors{Status: n - ok}, Latency: h}
	if cfg.OpenLoop() {
		s.Open = &measure.OpenLoop{TargetRate: cfg.Rate, Scheduled: int64(cfg.Rate * elapsed.Seconds())}
	}
	return s, nil
}

// saturating serves 100 req/s per connection up to 300 connections, then less; latency grows.
func saturating(level float64, _ int) (float64, float64, time.Duration) {
	qps := 100 * min(level, 300)
	if level > 300 {
		qps = 30000 * 300 / level
	}
	return qps, 100, time.Duration(level) * time.Millisecond
}

func TestRunnerStopsAndRepeats(t *testing.T) {
	obj, _ := ParseObjective("p99<=250ms,success>=99.9%")
	failing := func(level float64, c int) (float64, float64, time.Duration) {
		q, _, l := saturating(level, c)
		if level >= 200 {
			return q, 10, l // success collapses from c=200
		}
		return q, 100, l
	}
	tests := []struct {
		name      string
		plan      Plan
		rules     Rules
		shape     func(float64, int) (float64, float64, time.Duration)
		cancelAt  time.Duration // cancel ctx at this fake time; 0: never
		fileLimit int           // connections the fake file limit allows; 0: no check
		steps     int           // measured steps
		rule      string        // why the sweep stopped; "" for none
		knee      string
	}{
		// every level runs: the zero rules never stop
		{"no stop", Plan{Levels: []int{100, 200, 400, 800}}, Rules{}, saturating, 0, 0, 4, "", "c=200"},
		// two levels below the best stop the sweep (c=400 and c=800 after the peak at c=300)
		{"decline", Plan{Levels: []int{100, 300, 400, 600, 800}}, DefaultRules, saturating, 0, 0, 4, RuleDecline, "c=100"},
		// a success rate under the floor stops at once
		{"success floor", Plan{Levels: []int{100, 200, 400}}, DefaultRules, failing, 0, 0, 2, RuleSuccess, "c=100"},
		// --count 3: three steps per level, reduced to one level each
		{"repetitions", Plan{Levels: []int{100, 200}, Count: 3}, DefaultRules, saturating, 0, 0, 6, "", "c=200"},
		// interrupted during the second level's step (1 s warmup + 1 s step per level)
		{"interrupt", Plan{Levels: []int{100, 200, 400}, Warmup: measure.Duration(time.Second)}, DefaultRules, saturating, 3500 * time.Millisecond, 0, 2, RuleInterrupted, "c=200"},
		// interrupted during a warmup: the level is not measured
		{"interrupt in warmup", Plan{Levels: []int{100, 200}, Warmup: measure.Duration(time.Second)}, DefaultRules, saturating, 2500 * time.Millisecond, 0, 1, RuleInterrupted, "c=100"},
		// the next level needs more connections than the file limit allows
		{"file limit", Plan{Levels: []int{100, 200, 400}}, DefaultRules, saturating, 0, 300, 2, RuleFileLimit, "c=200"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				if tt.cancelAt > 0 {
					time.AfterFunc(tt.cancelAt, cancel)
				}
				f := &target{shape: tt.shape}
				saves := 0
				var hooked []string
				r := Runner{Base: load.Config{Threads: 1, Duration: measure.Duration(time.Second)}, Step: f.step,
					Save: func(steps []*measure.Step) error { saves++; return nil },
					Hook: func(_ context.Context, i StepInfo) func(*measure.Step) {
						hooked = append(hooked, i.Name())
						return nil
					}}
				if tt.fileLimit > 0 {
					r.FileLimit = func(conns int) error {
						if conns > tt.fileLimit {
							return fmt.Errorf("sweep: %w", errors.New("cannot open that many"))
						}
						return nil
					}
				}
				rec := NewRecord(tt.plan, obj, tt.rules)
				steps, err := r.Run(ctx, rec)
				if err != nil {
					t.Fatalf("Run = %v", err)
				}
				if len(steps) != tt.steps || saves != tt.steps {
					t.Errorf("%d steps, %d saves (calls %v); want %d", len(steps), saves, f.calls, tt.steps)
				}
				rule := ""
				if rec.Stop != nil {
					rule = rec.Stop.Rule
				}
				if rule != tt.rule {
					t.Errorf("stop = %+v; want rule %q", rec.Stop, tt.rule)
				}
				if k := rec.KneeLevel(); k == nil || k.Label != tt.knee {
					t.Errorf("knee = %+v; want %s", k, tt.knee)
				}
				for i, s := range steps {
					if want := tt.plan.Label(i / tt.plan.Reps()); s.Label != want || s.Rep != i%tt.plan.Reps() {
						t.Errorf("step %d = %s rep %d; want %s rep %d", i, s.Label, s.Rep, want, i%tt.plan.Reps())
					}
				}
				if tt.plan.Reps() > 1 && (len(rec.Levels) != 2 || rec.Levels[0].Reps != 3) {
					t.Errorf("levels = %+v; want 2 levels of 3 repetitions", rec.Levels)
				}
				if tt.rule == RuleInterrupted && len(steps) > 0 && tt.name == "interrupt" {
					last := steps[len(steps)-1]
					if last.Elapsed.Duration() != 500*time.Millisecond || len(last.Warnings) != 1 || !strings.Contains(last.Warnings[0], "interrupted: measured 500ms of the planned 1s") {
						t.Errorf("interrupted step: elapsed %v warnings %q; want 500ms and an interrupted warning", last.Elapsed, last.Warnings)
					}
				}
				if tt.plan.Warmup > 0 && (len(hooked) == 0 || hooked[0] != "c=100 warmup") {
					t.Errorf("hook saw %v; want the warmup first", hooked)
				}
			})
		})
	}
}

func TestRunnerErrors(t *testing.T) {
	boom := errors.New("boom")
	calls := 0
	step := func(context.Context, load.Config) (*measure.Step, error) {
		calls++
		if calls == 2 {
			return nil, boom
		}
		h := measure.NewHistogram()
		h.Record(time.Millisecond)
		return &measure.Step{Elapsed: measure.Duration(time.Second), Attempts: 1, Requests: 1, Successes: 1, Latency: h}, nil
	}
	rec := NewRecord(Plan{Levels: []int{1, 2, 3}}, Objective{}, Rules{})
	steps, err := Runner{Step: step}.Run(t.Context(), rec)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "c=2") || len(steps) != 1 {
		t.Errorf("Run = %d steps, %v; want the first step and the error naming c=2", len(steps), err)
	}
	saveErr := errors.New("disk full")
	_, err = Runner{Step: step, Save: func([]*measure.Step) error { return saveErr }}.Run(t.Context(), NewRecord(Plan{Levels: []int{1}}, Objective{}, Rules{}))
	if !errors.Is(err, saveErr) {
		t.Errorf("Run with a failing Save = %v; want it", err)
	}
	rec = NewRecord(Plan{Levels: []int{10}}, Objective{}, DefaultRules)
	_, err = Runner{Step: step, FileLimit: func(int) error { return errors.New("cannot open 10 connections") }}.Run(t.Context(), rec)
	if err == nil || !strings.Contains(err.Error(), "cannot open 10") {
		t.Errorf("file limit before the first level = %v; want the error (nothing measured to keep)", err)
	}
}

func TestNativeAndRepeat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		obj, _ := ParseObjective(DefaultObjective)
		api := &target{shape: func(l float64, c int) (float64, float64, time.Duration) { return 10 * l, 100, time.Millisecond }}
		native := &target{shape: func(l float64, c int) (float64, float64, time.Duration) { return 40 * l, 100, time.Millisecond }}
		r := Runner{Base: load.Config{Duration: measure.Duration(time.Second)}, Step: api.step}
		rec := NewRecord(Plan{Levels: []int{10, 20, 30}}, obj, Rules{})
		steps, err := r.Run(t.Context(), rec)
		if err != nil {
			t.Fatal(err)
		}
		rec.Analyze(steps[:2]) // as if the sweep had stopped after two levels
		nat, steps, err := r.Native(t.Context(), rec, native.step)
		if err != nil || len(steps) != 2 || len(nat.Levels) != 2 || rec.VsNative == nil || rec.VsNative.Ratio != 0.25 {
			t.Fatalf("Native = %d steps, %v, comparison %+v; want 2 levels (the ones measured) and a ratio of 0.25", len(steps), err, rec.VsNative)
		}
		steps, err = Repeat(t.Context(), load.Config{Rate: 50, Duration: measure.Duration(time.Second)}, 3, native.step, nil)
		if err != nil || len(steps) != 3 || steps[2].Label != "rate=50/s" || steps[2].Rep != 2 {
			t.Errorf("Repeat = %d steps, %v; want 3 labelled rate=50/s, numbered", len(steps), err)
		}
	})
}

// rateTarget is a fake open-loop target: below ceiling it keeps up with the rate at 5 ms,
// above it falls behind; noisy lists the calls (from 1) that see a 900 ms p99.
func rateTarget(ceiling float64, noisy ...int) func(float64, int) (float64, float64, time.Duration) {
	return func(rate float64, call int) (float64, float64, time.Duration) {
		for _, n := range noisy {
			if call == n {
				return rate, 100, 900 * time.Millisecond
			}
		}
		if rate > ceiling {
			return ceiling, 100, 5 * time.Millisecond
		}
		return rate, 100, 5 * time.Millisecond
	}
}

func TestCapacityRunner(t *testing.T) {
	obj, _ := ParseObjective(DefaultObjective)
	tests := []struct {
		name     string
		shape    func(float64, int) (float64, float64, time.Duration)
		cancelAt time.Duration
		answer   float64
		limit    float64
		headline string // substring
		verdicts string // the probes' verdicts in order, e.g. "met failed failed"
	}{
		// a noisy first probe is not believed: its confirmation meets the objective
		{"noisy first probe", rateTarget(250, 1), 0, 262, 275, "capacity: 262 req/s meets p99<=500ms,success>=99.9%; 275 req/s does not (failed twice)", "failed met met failed failed"},
		// below the start rate: the start failed twice, the answer says so and why
		{"below the start", rateTarget(30), 0, 31.2, 32, "below the start rate 100 req/s because 100 req/s failed twice: sent 30 of 100 requests due (< 95%)", "failed failed failed failed met"},
		// an interrupted probe is neither pass nor fail, and the answer says the search did not finish
		{"interrupted", rateTarget(1000), 2500 * time.Millisecond, 200, 0, "interrupted: the search did not finish", "met met interrupted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				if tt.cancelAt > 0 {
					time.AfterFunc(tt.cancelAt, cancel)
				}
				f := &target{shape: tt.shape}
				saved := 0
				r := CapacityRunner{Search: Search{Precision: 0.05}.WithDefaults(), Objective: obj,
					Base: load.Config{Duration: measure.Duration(time.Second)}, Step: f.step,
					Save: func(_ []*measure.Step, c *Capacity) error { saved = len(c.Probes); return nil }}
				c, steps, err := r.Run(ctx)
				if err != nil {
					t.Fatal(err)
				}
				var verdicts []string
				for _, p := range c.Probes {
					verdicts = append(verdicts, p.Verdict)
					if p.Reason == "" {
						t.Errorf("probe %+v has no reason", p)
					}
				}
				if got := strings.Join(verdicts, " "); !strings.HasPrefix(got, tt.verdicts) {
					t.Errorf("verdicts %q; want them to start %q (probes %+v)", got, tt.verdicts, c.Probes)
				}
				if c.Answer != tt.answer || c.Limit != tt.limit || len(steps) != len(c.Probes) || saved != len(c.Probes) {
					t.Errorf("answer %v limit %v, %d steps, %d probes, %d saved; want %v %v and a step per probe", c.Answer, c.Limit, len(steps), len(c.Probes), saved, tt.answer, tt.limit)
				}
				if h := c.Headline(); !strings.Contains(h, tt.headline) || strings.Contains(h, "00000000") {
					t.Errorf("Headline() = %q; want %q, sensible precision", h, tt.headline)
				}
			})
		})
	}
}

func TestRoundRate(t *testing.T) {
	if r := roundRate(187.49999999); r != 187 {
		t.Errorf("roundRate(187.49999999) = %v; want 187", r)
	}
}
