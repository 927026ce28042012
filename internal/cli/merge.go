package cli

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/apiperf/apiperf/report"
	"github.com/apiperf/apiperf/result"
)

func cmdMerge(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet("merge", e)
	out := fs.StringP("out", "o", "merged/run.json", "where to save the merged run.json (its reports go beside it)")
	latency := fs.Bool("latency", false, "print the latency distribution")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: apiperf merge [flags] RUN RUN...\n\nMerge the results of generators that loaded the same target at the same time (one\nrun.json or run directory each, e.g. from the pods of a Kubernetes Indexed Job): histograms,\ncounts and timelines are merged exactly, connections add up.\n\n%s", fs.FlagUsages())
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() < 2 {
		return usagef("merge: want at least two runs to merge, got %d", fs.NArg())
	}
	if err := checkRunDir(filepath.Dir(filepath.Dir(*out)), filepath.Base(filepath.Dir(*out))); err != nil {
		return err
	}
	var runs []*result.Run
	for _, p := range fs.Args() {
		r, err := result.Load(p)
		if err != nil {
			return asUsage(err)
		}
		runs = append(runs, r)
	}
	m, err := result.Merge(runs)
	if err != nil {
		return asUsage(fmt.Errorf("merge: %w", err))
	}
	if err := m.Save(*out); err != nil {
		return err
	}
	dir := filepath.Dir(*out)
	if m.Sweep == nil && m.Capacity == nil {
		if err := report.Header(e.stdout, m); err != nil {
			return err
		}
	}
	if err := report.Summary(e.stdout, m, report.SummaryOptions{ProfileDir: dir, TextOptions: report.TextOptions{Latency: *latency}}); err != nil {
		return err
	}
	if _, err := report.WriteAll(dir, m); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "merged %d runs: %s, report: %s\n", len(runs), *out, filepath.Join(dir, report.HTMLFile))
	return nil
}
