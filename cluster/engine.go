package cluster

import (
	"context"
	"io"

	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
	"github.com/apiperf/apiperf/scenario/lua"
)

// Engine returns the RunFunc that runs a plan with the normal engine (load.Run), the
// request source made from the shipped scenario: a wrk script, a mix or a single request.
// A script's print output goes to stdout.
func Engine(stdout io.Writer) RunFunc {
	return func(ctx context.Context, p *Plan, interval func(*measure.Interval)) (*measure.Step, error) {
		src, closeSrc, err := Source(ctx, p, stdout)
		if err != nil {
			return nil, err
		}
		defer closeSrc()
		target, err := scenario.ParseTarget(p.Scenario.URL)
		if err != nil {
			return nil, err
		}
		return load.Run(ctx, p.Load, src, target, load.WithExpected(p.Expected), load.WithIntervals(interval))
	}
}

// Source makes the request source of a plan, and a function that releases it.
func Source(ctx context.Context, p *Plan, stdout io.Writer) (scenario.Source, func(), error) {
	sc := p.Scenario
	switch {
	case p.Encoded != nil:
		return p.Encoded, func() {}, nil
	case p.ScriptCode != "":
		src, err := lua.NewString(sc.Script, p.ScriptCode, sc, lua.Options{Args: p.ScriptArgs, Stdout: stdout, Context: ctx, Threads: p.Load.Threads})
		if err != nil {
			return nil, nil, err
		}
		return src, func() { src.Close() }, nil
	case sc.Mix != nil:
		src, err := sc.Mix.Source(sc)
		if err != nil {
			return nil, nil, err
		}
		return src, func() {}, nil
	}
	src, err := scenario.NewStatic(sc)
	if err != nil {
		return nil, nil, err
	}
	return src, func() {}, nil
}
