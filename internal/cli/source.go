package cli

import (
	"io"

	"github.com/spf13/pflag"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
)

// sourceFlags choose where requests come from besides the plain flags: a wrk Lua script or
// a declarative scenario file.
type sourceFlags struct{}

func (f *sourceFlags) register(fs *pflag.FlagSet) {}

// source is a request source and what to do after the run with it (wrk's done()).
type source struct {
	scenario.Source
	// done runs after the summary is printed (a script's done callback); may be nil.
	done func(w io.Writer, s *measure.Step) error
}

// buildSource makes the request source for sc; extra are the words after "--".
func (f *sourceFlags) build(sc scenario.Scenario, extra []string) (*source, error) {
	st, err := scenario.NewStatic(sc)
	if err != nil {
		return nil, err
	}
	return &source{Source: st}, nil
}
