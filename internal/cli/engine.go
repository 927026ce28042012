package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/apiperf/apiperf/live"
	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
	"github.com/apiperf/apiperf/sweep"
)

// engine is the step function the CLI gives the library runners: the load engine against
// one target, with a live progress line on a terminal naming the step.
type engine struct {
	e        *env
	quiet    bool
	src      scenario.Source
	target   scenario.Target
	expected measure.StatusSet
	start    time.Time      // when the first step began, for the progress line
	info     sweep.StepInfo // the step running now
	watch    *live.Session  // the live views (nil: none; then a progress line on a terminal)
}

func newEngine(e *env, quiet bool, src scenario.Source, tgt scenario.Target, expected measure.StatusSet) *engine {
	return &engine{e: e, quiet: quiet, src: src, target: tgt, expected: expected}
}

// step runs one step of load.
func (g *engine) step(ctx context.Context, cfg load.Config) (*measure.Step, error) {
	opts := append([]load.Option{load.WithExpected(g.expected)}, g.watch.Options()...)
	if g.e.isTerminal && !g.quiet && !g.watch.Drawing() {
		opts = append(opts, load.WithProgress(g.progressLine(cfg)))
	}
	return load.Run(ctx, cfg, g.src, g.target, opts...)
}

// progress is the hook that names the step of the progress line and clears the line after it.
func (g *engine) progress(_ context.Context, i sweep.StepInfo) func(*measure.Step) {
	if g.start.IsZero() {
		g.start = time.Now()
	}
	g.info = i
	g.watch.Begin(live.Phase{Label: i.Label, Name: i.Name(), Level: i.Level + 1, Levels: i.Levels, Load: i.Config,
		Warmup: i.Warmup, Endpoints: g.src.Endpoints()})
	return func(*measure.Step) {
		g.watch.Clear()
		if g.e.isTerminal && !g.quiet && !g.watch.Drawing() {
			fmt.Fprint(g.e.stderr, "\r\033[K")
		}
	}
}

// progressLine draws "level 2/5 c=50 run 1/3  3s/10s  sweep 25s  1234 req/s  0 errors".
func (g *engine) progressLine(cfg load.Config) func(load.Progress) {
	var last int64
	var lastT time.Duration
	return func(p load.Progress) {
		rate := float64(p.Requests-last) / (p.Elapsed - lastT).Seconds()
		last, lastT = p.Requests, p.Elapsed
		of := ""
		if g.info.Levels > 0 {
			of = fmt.Sprintf("/%d", g.info.Levels)
		}
		fmt.Fprintf(g.e.stderr, "\r\033[K  level %d%s %s  %v/%v  sweep %v  %.0f req/s  %d errors",
			g.info.Level+1, of, g.info.Name(), p.Elapsed.Truncate(time.Second), cfg.Duration, time.Since(g.start).Truncate(time.Second), rate, p.Errors)
	}
}
