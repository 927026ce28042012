package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/apiperf/apiperf/compare"
	"github.com/apiperf/apiperf/procfs"
	"github.com/apiperf/apiperf/report"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/scenario"
)

// variantFlags are sweep's --variant and --variant-pid: several targets swept with one plan
// and compared.
type variantFlags struct {
	specs []string // NAME=URL
	pids  []string // NAME=PID
}

func (f *variantFlags) register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&f.specs, "variant", nil, "sweep this `NAME=URL` too, with the same plan, and compare them all, the first as the reference (repeatable; replaces the URL argument)")
	fs.StringArrayVar(&f.pids, "variant-pid", nil, "with --variant: sample this variant's process from /proc, `NAME=PID` (repeatable; like --target-pid)")
}

func (f *variantFlags) given() bool { return len(f.specs) > 0 }

// targets reads the variants and their processes, reporting every problem at once,
// including flags that name one target where a variant sweep has several.
func (f *variantFlags) targets(fs *pflag.FlagSet, tf *targetFlags) ([]compare.VariantSpec, []error) {
	var errs []error
	for _, flag := range []string{"name", "pprof", "metrics", "target-pid", "workers", "listen"} {
		if fs.Changed(flag) {
			errs = append(errs, fmt.Errorf("--%s names one target; a variant sweep has several (names come from --variant, processes from --variant-pid)", flag))
		}
	}
	var ts []compare.VariantSpec
	for _, s := range f.specs {
		t, err := compare.ParseTarget(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("--variant: %w", err))
			continue
		}
		ts = append(ts, t)
	}
	for _, s := range f.pids {
		name, v, _ := strings.Cut(s, "=")
		pid, err := strconv.Atoi(strings.TrimSpace(v))
		i := indexTarget(ts, strings.TrimSpace(name))
		switch {
		case err != nil || pid <= 0:
			errs = append(errs, fmt.Errorf("--variant-pid %q: want NAME=PID", s))
		case i < 0:
			errs = append(errs, fmt.Errorf("--variant-pid %q: no --variant is named %q", s, name))
		default:
			if _, err := procfs.Read(pid); err != nil {
				errs = append(errs, fmt.Errorf("--variant-pid %s: %w", name, err))
			}
			ts[i].PID = pid
		}
	}
	if err := compare.ValidateTargets(ts); err != nil {
		errs = append(errs, fmt.Errorf("--variant: %w", err))
	}
	for _, t := range ts {
		if _, err := scenario.ParseTarget(t.URL); err != nil {
			errs = append(errs, fmt.Errorf("--variant %s: %w", t.Name, err))
		}
	}
	return ts, errs
}

func targetNames(ts []compare.VariantSpec) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

func indexTarget(ts []compare.VariantSpec, name string) int {
	for i, t := range ts {
		if t.Name == name {
			return i
		}
	}
	return -1
}

// variants sweeps every target with the job's plan (sc with each target's URL), each into
// <dir>/<NAME>, then prints their comparison and writes it to <dir>/compare.
func (j *sweepJob) variants(ctx context.Context, sc scenario.Scenario, ts []compare.VariantSpec, tf targetFlags) error {
	failed := false
	var bad error // bad input found by the first variant's sweep (a script, a directory): nothing else runs
	vctx, stop := context.WithCancel(ctx)
	defer stop()
	sweepOne := func(ctx context.Context, t compare.VariantSpec, first bool) (*result.Run, string, error) {
		fmt.Fprintf(j.e.stdout, "== variant %s: %s\n", t.Name, scenario.Scenario{URL: t.URL, SecretParams: sc.SecretParams}.Redact().URL)
		v := sc
		v.URL = t.URL
		vt := tf
		vt.pid = t.PID
		r, dir, err := j.one(ctx, v, t.Name, vt, first && j.wf.vsNative)
		fmt.Fprintln(j.e.stdout)
		var ue usageError
		if r == nil && errors.As(err, &ue) {
			bad = err
			stop()
		}
		if errors.Is(err, errFailed) {
			failed = true // the variant ran: it is compared, and the exit code says it failed
			return r, dir, nil
		}
		return r, dir, err
	}
	m, err := compare.SweepVariants(vctx, ts, sweepOne)
	if bad != nil {
		return bad
	}
	if err != nil {
		failed = true
		fmt.Fprintf(j.e.stderr, "apiperf: %v\n", err)
	}
	if len(m.Variants) > 0 {
		if err := report.CompareText(j.e.stdout, m); err != nil {
			return err
		}
		out := filepath.Join(j.wf.dir, compare.ReservedName)
		paths, err := report.WriteCompare(out, m)
		if err != nil {
			return err
		}
		if !j.wf.quiet {
			fmt.Fprintf(j.e.stderr, "apiperf: wrote %s; open %s\n", strings.Join(paths, ", "), filepath.Join(out, report.CompareHTMLFile))
		}
	}
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("interrupted: %w", errFailed)
	case failed:
		return errFailed
	}
	return nil
}
