// Package cli wires apiperf's subcommands: it parses flags, calls the libraries and
// maps errors to exit codes. One file per subcommand; a command that sends load sets up
// and tears down its live view and workers with startLoad (session.go).
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"

	"github.com/apiperf/apiperf/compare"
	"github.com/spf13/pflag"
)

// Exit codes.
const (
	ExitOK     = 0 // success
	ExitFailed = 1 // the run failed or a gate failed
	ExitUsage  = 2 // bad input
	// ExitInconclusive: a gate or an A/B comparison found no regression but could not rule
	// one out (an estimate over budget, not significant).
	ExitInconclusive = 3
)

// env is what every subcommand gets besides its arguments.
type env struct {
	stdout, stderr io.Writer // both apply the redaction rule (redactw.go)
	// isTerminal reports whether stderr is a terminal (progress lines are shown only then).
	isTerminal bool
	// redact points to the --redact names, filled when the flags are parsed.
	redact *[]string
	// checkOnly makes run, sweep and capacity return once their arguments are checked, before
	// anything is read, resolved or sent (apiperf k8s checks the load it ships).
	checkOnly bool
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e *env, args []string) error
}

func commands() []command {
	return []command{
		{"run", "load one URL (closed loop with -c, open loop with -R) and print a wrk-style summary", cmdRun},
		{"sweep", "run the load at a list of concurrency levels or rates; write charts and an HTML report", cmdSweep},
		{"capacity", "find the highest rate that meets a latency/success objective", cmdCapacity},
		{"diff", "compare two runs (run directories, run.json or classic .dat files)", cmdDiff},
		{"compare", "compare two or more runs side by side (peak, knee, p99, errors, target CPU and RSS)", cmdCompare},
		{"report", "re-render every report of a run from its run.json", cmdReport},
		{"gate", "fail when the current run is measurably slower than a baseline", cmdGate},
		{"ab", "compare two targets run alternately (ABBA pairs, paired test); fail when B is slower", cmdAB},
		{"history", "list recorded runs, import run directories, chart trends", cmdHistory},
		{"worker", "join a coordinator (`run --workers N`) and run its share of the load", cmdWorker},
		{"k8s", "print Kubernetes manifests for a scale-out run (coordinator Job, workers Indexed Job, token Secret)", cmdK8s},
		{"merge", "merge run.json files from several generators exactly", cmdMerge},
		{"serve", "start the built-in reference target on loopback", cmdServe},
	}
}

// usageError marks bad input: exit code 2.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

// usagef returns a usage error (exit code 2).
func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// asUsage marks err as bad input unless it is nil or the target's failure (targetError).
func asUsage(err error) error {
	var t targetError
	if err == nil || errors.As(err, &t) {
		return err
	}
	return usageError{err}
}

// errFailed marks a run whose outcome is a failure (exit 1) that was already reported.
var errFailed = errors.New("failed")

// errInconclusive marks a comparison whose outcome is inconclusive (exit 3), already reported.
var errInconclusive = errors.New("inconclusive")

// outcomeErr is the error a comparison's outcome exits with: nil, errFailed,
// errInconclusive, or for runs refused by --strict-conditions a usage error naming c's
// warnings (exit 2).
func outcomeErr(o compare.Outcome, c *compare.ConditionsCheck) error {
	switch o {
	case compare.OutcomeFail:
		return errFailed
	case compare.OutcomeInconclusive:
		return errInconclusive
	case compare.OutcomeNotComparable:
		return usagef("--strict-conditions: %s", strings.Join(c.Warnings, "; "))
	}
	return nil
}

// Run executes apiperf with args (without the program name) and returns the exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	e := &env{isTerminal: isTerminal(stderr)}
	e.stdout, e.stderr = redactWriter{stdout, e}, redactWriter{stderr, e}
	if len(args) >= 2 && args[0] == "help" {
		// `apiperf help run` is `apiperf run --help`; `help history trend` reaches the subcommand.
		args = append(append([]string{}, args[1:]...), "--help")
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		printUsage(stdout)
		if len(args) == 0 {
			return ExitUsage
		}
		return ExitOK
	}
	if args[0] == "version" || args[0] == "--version" {
		fmt.Fprintln(stdout, "apiperf", version())
		return ExitOK
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return exitCode(e, c.run(ctx, e, args[1:]))
		}
	}
	fmt.Fprintf(stderr, "apiperf: unknown command %q (see apiperf help)\n", args[0])
	return ExitUsage
}

func exitCode(e *env, err error) int {
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, pflag.ErrHelp):
		return ExitOK
	case errors.Is(err, errFailed):
		return ExitFailed
	case errors.Is(err, errInconclusive):
		return ExitInconclusive
	}
	msg := strings.ReplaceAll(err.Error(), "\n", "; ")
	fmt.Fprintf(e.stderr, "apiperf: %s\n", msg)
	var u usageError
	if errors.As(err, &u) {
		return ExitUsage
	}
	return ExitFailed
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "apiperf: test and tune the performance of HTTP APIs")
	fmt.Fprintln(w, "\nUsage: apiperf <command> [flags] [args]\n\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'apiperf <command> --help' for the flags and examples of a command.")
	printExamples(w, "apiperf")
	fmt.Fprint(w, exitCodes)
}

// newFlagSet returns a flag set that reports errors instead of exiting and
// accepts flags after positional arguments, as wrk does on Linux. Its output is where
// --help goes: stdout (`apiperf run --help | grep trace`); errors go to stderr as usage errors.
func newFlagSet(name string, e *env) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(e.stdout)
	fs.SortFlags = false
	return fs
}

// parseFlags parses args and turns flag errors into usage errors.
func parseFlags(fs *pflag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			printExamples(fs.Output(), fs.Name())
			return err
		}
		return usageError{plainFlagError(err)}
	}
	return nil
}

// strconvFlagError matches pflag's message for a value strconv refused:
// `invalid argument "yes" for "--latency" flag: strconv.ParseBool: parsing "yes": invalid syntax`.
// Compiled when first used: at init it was 28 KB of every process's heap, a load's included.
var strconvFlagError = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^invalid argument (".*") for "(.*)" flag: strconv\.Parse(Bool|Int|Uint|Float): parsing ".*": (.*)$`)
})

// plainFlagError says what a flag wanted instead of quoting strconv's error.
func plainFlagError(err error) error {
	m := strconvFlagError().FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	want := map[string]string{"Bool": "true or false", "Int": "a whole number", "Uint": "a whole number of 0 or more", "Float": "a number"}[m[3]]
	if strings.HasSuffix(m[4], "out of range") {
		return fmt.Errorf("%s %s: out of range", m[2], m[1])
	}
	return fmt.Errorf("%s %s: want %s", m[2], m[1], want)
}
