package loadtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/compare"
	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/scenario"
	"github.com/apiperf/apiperf/sweep"
)

// abSettings is how an A/B comparison runs: pairs before the first look and between looks,
// the most pairs, and the budgets of the gate.
type abSettings struct {
	pairs, maxPairs int
	gate            compare.GateConfig
}

// ABOption sets one knob of an A/B comparison (AB, AssertAB).
type ABOption func(*abSettings)

// Pairs sets the A/B pairs (ABBA order) run before the first look and between looks
// (default compare.DefaultPairs).
func Pairs(n int) ABOption { return func(s *abSettings) { s.pairs = n } }

// MaxPairs sets the most pairs run: pairs are added, Pairs at a time, until the comparison is
// settled or this many ran (default compare.DefaultLooks x Pairs; Pairs: judge once).
func MaxPairs(n int) ABOption { return func(s *abSettings) { s.maxPairs = n } }

// Budget sets the gate's budgets in percent: the largest drop of B's QPS and the largest rise
// of its p99 latency against A's that pass (defaults those of `apiperf ab`: 5% and 10%).
func Budget(maxQPSDrop, maxP99Rise float64) ABOption {
	return func(s *abSettings) { s.gate.MaxQPSDrop, s.gate.MaxP99Rise = maxQPSDrop, maxP99Rise }
}

// AB compares target b against target a as `apiperf ab` does: the same load (opts) on each,
// alternately, in pairs in ABBA order so that drift of the machine hits both alike, each step
// after a warmup (default compare.DefaultABWarmup; Warmup sets it) on the target about to be
// measured; then the paired test on the per-pair changes of QPS, p99 and error rate decides.
// The result is the one `apiperf ab --json` writes: Outcome() is pass, fail (a significant
// change over budget) or inconclusive (over budget, not significant), and Text writes it as
// the CLI prints it. Handlers are served each on its own listener for the whole comparison.
// The process's CPU per request is not compared: both handlers share this process.
func AB(ctx context.Context, a, b Target, opts []Option, abOpts ...ABOption) (*compare.ABResult, error) {
	ab := abSettings{pairs: compare.DefaultPairs, gate: compare.DefaultGateConfig}
	ab.gate.MaxCPURise = 0
	for _, o := range abOpts {
		o(&ab)
	}
	if ab.maxPairs == 0 {
		ab.maxPairs = compare.DefaultLooks * ab.pairs
	}
	opts = append(opts, func(s *settings) {
		if !s.warmupSet {
			s.warmup = compare.DefaultABWarmup
		}
	})
	sa, errA := settingsFor(a, opts)
	sb, errB := settingsFor(b, opts)
	errs := []error{errA, errB, ab.gate.Validate()}
	if sa.cost || sb.cost || sa.targetProcess || sb.targetProcess {
		errs = append(errs, errors.New("AB compares the loads, not the targets' cost: give no MeasureCost or TargetProcess"))
	}
	if ab.pairs < 1 || ab.maxPairs < ab.pairs || ab.maxPairs > 1000 {
		errs = append(errs, fmt.Errorf("pairs %d, at most %d: want 1 <= pairs <= most pairs <= 1000", ab.pairs, ab.maxPairs))
	}
	cfg := sa.config()
	plan := sweep.Plan{Warmup: cfg.Warmup, Count: ab.pairs}
	if cfg.OpenLoop() {
		plan.Rates = []float64{cfg.Rate}
	} else {
		plan.Levels = []int{cfg.Connections}
	}
	cfg.Warmup = 0 // the plan's, before every step
	seq, checks, looks, need := compare.ABSequence(ab.gate, plan.Len(), false, ab.pairs, ab.maxPairs)
	if ab.pairs >= 1 && ab.pairs < need {
		errs = append(errs, fmt.Errorf("pairs %d cannot show a significant change at alpha %g over %d checks x %d looks; want %d or more",
			ab.pairs, ab.gate.Alpha, checks, looks, need))
	}
	if err := errors.Join(append(errs, cfg.Validate(), plan.Validate())...); err != nil {
		return nil, err
	}
	scA, closeA, err := sa.served(a)
	if err != nil {
		return nil, err
	}
	defer closeA()
	scB, closeB, err := sb.served(b)
	if err != nil {
		return nil, err
	}
	defer closeB()
	step := func(s *settings, sc scenario.Scenario) sweep.StepFunc {
		return func(ctx context.Context, c load.Config) (*measure.Step, error) {
			st, _, err := s.step(ctx, c, sc, false)
			return st, err
		}
	}
	run, err := sweep.RunAB(ctx, plan, cfg, step(sa, scA), step(sb, scB), seq, nil)
	if err != nil {
		return nil, err
	}
	docs := [2]*result.Run{}
	for i, side := range []struct {
		name  string
		sc    scenario.Scenario
		steps []*measure.Step
	}{{sweep.SideA, scA, run.A}, {sweep.SideB, scB, run.B}} {
		d := &result.Run{Version: result.Version, Tool: "apiperf loadtest", Kind: result.KindRun, Name: side.name,
			Command: []string{"loadtest.AB"}, Scenario: side.sc, Load: cfg, Steps: side.steps, End: time.Now().UTC()}
		if len(side.steps) > 0 {
			d.Start = side.steps[0].Start
		}
		d.AB = &sweep.ABRecord{Side: side.name, Every: ab.pairs, Max: ab.maxPairs, Looks: looks, Pairs: run.Pairs, Order: run.Order}
		d.Redact()
		docs[i] = d
	}
	res, err := compare.AB(docs[0], docs[1], ab.gate)
	if err != nil {
		return nil, err
	}
	res.A, res.B = a.String(), b.String()
	if ctx.Err() != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("interrupted: compared the %d pair(s) measured", len(run.B)))
	}
	return res, nil
}

// served returns the scenario of t's load: for a Handler, on a server started for it, which
// close shuts down.
func (s *settings) served(t Target) (scenario.Scenario, func(), error) {
	if t.handler == nil {
		sc, err := s.scenario(t.url)
		return sc, func() {}, err
	}
	h := t.handler
	if s.cost {
		s.timed = &timedHandler{h: h}
		h = s.timed
	}
	srv, err := serve(h, s.http2)
	if err != nil {
		return scenario.Scenario{}, nil, err
	}
	done := func() { srv.close(s.timeout) }
	sc, err := s.scenario(srv.url)
	if err != nil {
		done()
		return sc, nil, err
	}
	return sc, done, nil
}

// AssertAB compares b against a (see AB) and fails the test (t.Error) when B is a
// regression, with the comparison as `apiperf ab` prints it; an inconclusive comparison is
// logged, not failed. Bad options fail it at once (t.Fatal). It returns the comparison.
func AssertAB(tb testing.TB, a, b Target, opts []Option, abOpts ...ABOption) *compare.ABResult {
	tb.Helper()
	res, err := AB(tb.Context(), a, b, opts, abOpts...)
	if err != nil {
		tb.Fatalf("loadtest.AssertAB(%s, %s): %v", a, b, err)
	}
	var text strings.Builder
	_ = res.Text(&text)
	switch res.Outcome() {
	case compare.OutcomeFail:
		tb.Errorf("loadtest.AssertAB: B is slower than A\n%s", text.String())
	case compare.OutcomeInconclusive:
		tb.Logf("loadtest.AssertAB: inconclusive (over budget, not significant)\n%s", text.String())
	}
	return res
}
