package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/apiperf/apiperf/report"
	"github.com/apiperf/apiperf/result"
)

func cmdReport(ctx context.Context, e *env, args []string) error {
	flags := newFlagSet("report", e)
	dir := flags.String("dir", "", "write the outputs here (default: the directory holding run.json)")
	quiet := flags.BoolP("quiet", "q", false, "print nothing but errors")
	flags.Usage = func() {
		fmt.Fprintf(flags.Output(), "Usage: apiperf report [flags] RUN\n\nRe-render every output of a run (.dat, charts, report.html) from its run.json alone.\nRUN is a run directory or a run.json file.\n\n%s", flags.FlagUsages())
	}
	if err := parseFlags(flags, args); err != nil {
		return err
	}
	if flags.NArg() != 1 {
		return usagef("report: want one run directory or run.json, got %s (usage: apiperf report [flags] RUN)", report.Plural(flags.NArg(), "argument"))
	}
	path := flags.Arg(0)
	r, err := loadRun(path)
	if err != nil {
		return err
	}
	if r.Verdict == nil {
		r.Judge() // a run saved before the verdict existed: judged from what it holds
	}
	out := *dir
	if out == "" {
		out = path
		if st, err := os.Stat(path); err == nil && !st.IsDir() {
			out = filepath.Dir(path)
		}
	}
	paths, err := report.WriteAll(out, r)
	if err != nil {
		return err
	}
	if !*quiet {
		for _, p := range paths {
			fmt.Fprintln(e.stdout, p)
		}
		fmt.Fprintf(e.stderr, "apiperf: wrote %d files; open %s\n", len(paths), filepath.Join(out, report.HTMLFile))
	}
	return nil
}

// loadRun reads a run directory or run.json; every problem is bad input (exit 2) and names
// the file, with the line when there is one.
func loadRun(path string) (*result.Run, error) {
	r, err := result.Load(path)
	if err == nil {
		return r, nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return nil, usagef("%s: cannot read it: %v", pe.Path, pe.Err)
	}
	return nil, asUsage(err)
}

// isRunFile reports whether the file at path looks like a run document (JSON) rather than a
// classic .dat file.
func isRunFile(path string) (bool, error) {
	st, err := os.Stat(path)
	if err != nil {
		return false, usagef("%s: cannot read it: %v", path, unwrapPath(err))
	}
	if st.IsDir() {
		return true, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return false, usagef("%s: cannot read it: %v", path, unwrapPath(err))
	}
	return strings.HasPrefix(strings.TrimSpace(string(b)), "{"), nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
