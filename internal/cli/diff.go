package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/apiperf/apiperf/compare"
	"github.com/apiperf/apiperf/report"
)

// defaultDiffDir is where `apiperf diff` writes unless --dir says otherwise: the same
// directory `apiperf sweep` writes its runs under.
const defaultDiffDir = "apiperf-out"

func cmdDiff(ctx context.Context, e *env, args []string) error {
	flags := newFlagSet("diff", e)
	dir := flags.String("dir", defaultDiffDir, "write the charts and <a>_<b>.diff.html into this directory")
	nameA := flags.String("name-a", "", "name of run A in charts and file names (default: from its path)")
	nameB := flags.String("name-b", "", "name of run B in charts and file names (default: from its path)")
	quiet := flags.BoolP("quiet", "q", false, "print the table only")
	flags.Usage = func() {
		fmt.Fprintf(flags.Output(), "Usage: apiperf diff [flags] A B\n\nCompare run A with run B level by level. Each is a run directory, a run.json or a .dat file\nwritten by the classic sweep script. Writes <a>_<b>.qps.ttlb.diff.{png,svg},\n<a>_<b>.successrate.diff.{png,svg} and <a>_<b>.diff.html, and prints a table per level.\n\n%s", flags.FlagUsages())
	}
	if err := parseFlags(flags, args); err != nil {
		return err
	}
	if flags.NArg() != 2 {
		return usagef("diff: want two runs A and B, got %s (usage: apiperf diff [flags] A B)", report.Plural(flags.NArg(), "argument"))
	}
	a, err := loadSide(flags.Arg(0), *nameA)
	if err != nil {
		return err
	}
	b, err := loadSide(flags.Arg(1), *nameB)
	if err != nil {
		return err
	}
	if a.Name == b.Name {
		a.Name, b.Name = a.Name+"-A", b.Name+"-B"
	}
	note := noteExperiments(e, flags.Arg(0), flags.Arg(1))
	d := compare.New(a, b)
	if note != "" {
		d.Notes = append(d.Notes, note)
	}
	if err := report.DiffText(e.stdout, d); err != nil {
		return err
	}
	if err := printProfileDiff(e.stdout, flags.Arg(0), flags.Arg(1)); err != nil { // profile.go
		return err
	}
	paths, err := report.WriteDiff(*dir, d)
	if err != nil {
		return err
	}
	if !*quiet {
		fmt.Fprintf(e.stderr, "apiperf: wrote %s; open %s\n", strings.Join(paths, ", "), filepath.Join(*dir, report.DiffHTMLFile(d)))
	}
	return nil
}

// loadSide reads one side of a diff: a run directory, a run.json or a classic .dat file.
func loadSide(path, name string) (compare.Side, error) {
	isRun, err := isRunFile(path)
	if err != nil {
		return compare.Side{}, err
	}
	if isRun {
		r, err := loadRun(path)
		if err != nil {
			return compare.Side{}, err
		}
		if name == "" {
			name = runName(path, r.Name)
		}
		s := compare.FromRun(report.SafeName(name), r)
		s.Source = path
		return s, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return compare.Side{}, usagef("%s: cannot read it: %v", path, unwrapPath(err))
	}
	defer f.Close()
	rows, err := report.ReadDat(path, f)
	if err != nil {
		return compare.Side{}, asUsage(err)
	}
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(path), ".dat") // the suffix only, unlike the classic sed
	}
	s := report.DatSide(report.SafeName(name), rows)
	s.Source = path
	return s, nil
}

// runName names a run from its document or, failing that, its directory.
func runName(path, docName string) string {
	if docName != "" {
		return docName
	}
	p := filepath.Clean(path)
	if filepath.Base(p) == "run.json" {
		p = filepath.Dir(p)
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	return filepath.Base(p)
}
