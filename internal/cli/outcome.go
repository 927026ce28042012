package cli

import (
	"errors"
	"fmt"

	"github.com/apiperf/apiperf/measure"
)

// exitCodes is what --help says about exit codes (README says the same).
const exitCodes = `
Exit codes: 0 the load ran and some request succeeded; 1 no request succeeded (the target
cannot be reached: apiperf stops after 1s without a connection), apiperf's own machine could
not open the connections asked for (local ports, open files), the run was interrupted, or a
gate/objective failed; 2 bad input (nothing was sent); 3 a gate or ab comparison was
inconclusive (an estimate over budget, not significant: neither a regression nor a pass).
`

// checkOutcome fails a measured run in which no request succeeded, or a step hit a limit of
// apiperf's own machine so the load asked for was not reached (exit 1), saying why on
// stderr in one line: the limit and its fix, the target could not be reached, or how the
// attempts failed.
func checkOutcome(e *env, steps []*measure.Step) error {
	for _, s := range steps {
		if s != nil && s.GeneratorLimit != nil {
			fmt.Fprintf(e.stderr, "apiperf: %s: %s\n", s.Label, s.GeneratorLimit)
			return errFailed
		}
	}
	var ok, attempts int64
	var errs measure.Errors
	reason := ""
	for _, s := range steps {
		if s == nil {
			continue
		}
		ok += s.Successes
		attempts += s.Attempts
		errs.Add(s.Errors)
		if err := s.Err(); errors.Is(err, measure.ErrUnreachable) || errors.Is(err, measure.ErrTLS) {
			reason = err.Error()
		}
	}
	if ok > 0 {
		return nil
	}
	if reason == "" {
		reason = fmt.Sprintf("no request succeeded: %d attempts", attempts)
		if e := errs.String(); e != "" {
			reason += " (" + e + ")"
		}
	}
	fmt.Fprintf(e.stderr, "apiperf: %s\n", reason)
	return errFailed
}
