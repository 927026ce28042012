package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
	"github.com/apiperf/apiperf/scenario/lua"
)

// sourceFlags choose where requests come from besides the plain flags: a wrk Lua script or
// a declarative scenario file.
type sourceFlags struct {
	script   string
	scenario string
	// stdout receives a script's print output during the run (default os.Stdout).
	stdout io.Writer
	// load is the run's load flags: a script's thread states are made before any traffic.
	load *loadFlags
	grpc grpcFlags // --proto, --import-path (grpc.go)
}

func (f *sourceFlags) register(fs *pflag.FlagSet) {
	fs.StringVarP(&f.script, "script", "s", "", "run a wrk Lua script (words after -- go to its init); a pipelined batch records one latency per response (wrk: one per batch), see README")
	fs.StringVar(&f.scenario, "scenario", "", "send a weighted mix of endpoints described in a YAML or JSON file")
	f.grpc.register(fs)
	if f.load != nil {
		f.load.grpc = &f.grpc
	}
}

// source is a request source and what to do after the run with it (wrk's done()).
type source struct {
	scenario.Source
	// scenario is the request description to save, with the mix when there is one.
	scenario scenario.Scenario
	// done runs after the summary is printed (a script's done callback); may be nil.
	done func(w io.Writer, s *measure.Step) error
	// banner describes what is sent, for the line printed before the run.
	banner string
}

// Failed passes on a script's failure (scenario.Failer), so that the engine stops the run
// when request() fails; never for other sources.
func (s *source) Failed() <-chan struct{} {
	if f, ok := s.Source.(scenario.Failer); ok {
		return f.Failed()
	}
	return nil
}

// Err is the script's failure, if any.
func (s *source) Err() error {
	if f, ok := s.Source.(scenario.Failer); ok {
		return f.Err()
	}
	return nil
}

// Busy passes on a script's time in its callbacks (scenario.Busy), so that the run warns
// when the script set the pace; 0 for other sources.
func (s *source) Busy() time.Duration {
	if b, ok := s.Source.(scenario.Busy); ok {
		return b.Busy()
	}
	return 0
}

// ServerStreaming passes on a gRPC source's kind of method (scenario.Streamer), so that
// server streams are timed as streams.
func (s *source) ServerStreaming() bool {
	st, ok := s.Source.(scenario.Streamer)
	return ok && st.ServerStreaming()
}

// describe is what the run sends, e.g. "POST http://127.0.0.1:8080/ (from post.lua)".
func (s *source) describe() string {
	if s.banner != "" {
		return s.banner
	}
	return s.scenario.Redact().String()
}

// build makes the request source for sc; extra are the words after "--". A script or
// scenario file that does not load is bad input.
func (f *sourceFlags) build(ctx context.Context, sc scenario.Scenario, extra []string) (*source, error) {
	if t, err := scenario.ParseTarget(sc.URL); err == nil && t.GRPC {
		return f.buildGRPC(ctx, sc, t)
	}
	switch {
	case f.script != "" && f.scenario != "":
		return nil, errors.New("give --script or --scenario, not both")
	case f.script != "":
		out := f.stdout
		if out == nil {
			out = os.Stdout
		}
		src, err := lua.New(f.script, sc, lua.Options{Args: extra, Stdout: out, Context: ctx, Threads: f.threads()})
		if err != nil {
			return nil, err
		}
		sc.Script = f.script
		banner := sc.Redact()
		banner.Method = src.Method()
		return &source{Source: src, scenario: sc, banner: banner.String() + " (from " + f.script + ")", done: func(w io.Writer, s *measure.Step) error {
			defer src.Close()
			return src.Done(w, s)
		}}, nil
	case f.scenario != "":
		mix, err := scenario.LoadMix(f.scenario)
		if err != nil {
			return nil, err
		}
		src, err := mix.Source(sc)
		if err != nil {
			return nil, err
		}
		sc.Mix = mix
		banner := sc.Redact()
		banner.Method = mix.Methods() // the mix's methods, not the URL's default GET
		return &source{Source: src, scenario: sc, banner: fmt.Sprintf("%s (a mix of %d endpoints from %s)", banner, len(mix.Endpoints), f.scenario)}, nil
	}
	st, err := scenario.NewStatic(sc)
	if err != nil {
		return nil, err
	}
	return &source{Source: st, scenario: sc}, nil
}

// Bound passes the run's bound to a script (scenario.Bounded), so it cannot outlive the run.
func (s *source) Bound(ctx context.Context) {
	if b, ok := s.Source.(scenario.Bounded); ok {
		b.Bound(ctx)
	}
}

// threads is how many engine threads the load will run (so a script's states can all be
// made, and fail, before any traffic); 1 when unknown.
func (f *sourceFlags) threads() int {
	if f.load == nil {
		return 1
	}
	n := f.load.threads
	if c := f.load.connections; c > 0 && c < n {
		n = c
	}
	return max(n, 1)
}
