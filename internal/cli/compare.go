package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/apiperf/apiperf/compare"
	"github.com/apiperf/apiperf/report"
)

// cmdCompare compares two or more runs side by side: `apiperf compare A B C ...`.
func cmdCompare(ctx context.Context, e *env, args []string) error {
	flags := newFlagSet("compare", e)
	dir := flags.String("dir", defaultDiffDir, "write compare.html and the charts into this directory")
	names := flags.String("names", "", "comma-separated names of the runs, in order (default: from their paths)")
	quiet := flags.BoolP("quiet", "q", false, "print the table only")
	flags.Usage = func() {
		fmt.Fprintf(flags.Output(), "Usage: apiperf compare [flags] A B [C ...]\n\nCompare two or more runs (run directories or run.json files), the first as the reference:\npeak QPS, %% of the first and of plain net/http, knee, p99 at the levels all measured, errors,\nthe target's CPU and RSS at the peak, connections per request. Writes compare.html and\ncompare.{qps,p99,successrate}.{png,svg}.\n\n%s", flags.FlagUsages())
	}
	if err := parseFlags(flags, args); err != nil {
		return err
	}
	if flags.NArg() < 2 {
		return usagef("compare: want at least two runs, got %d (usage: apiperf compare [flags] A B [C ...])", flags.NArg())
	}
	var given []string
	if *names != "" {
		given = strings.Split(*names, ",")
		if len(given) != flags.NArg() {
			return usagef("compare: --names has %d names for %d runs", len(given), flags.NArg())
		}
	}
	var vs []compare.Variant
	seen := map[string]int{}
	for i, path := range flags.Args() {
		r, err := loadRun(path)
		if err != nil {
			return err
		}
		name := runName(path, r.Name)
		if given != nil {
			name = strings.TrimSpace(given[i])
		}
		name = report.SafeName(name)
		if seen[name]++; seen[name] > 1 {
			name = fmt.Sprintf("%s-%d", name, seen[name])
		}
		v := compare.VariantOf(name, r)
		v.Source = path
		vs = append(vs, v)
	}
	m := compare.NewMulti(vs)
	if err := report.CompareText(e.stdout, m); err != nil {
		return err
	}
	paths, err := report.WriteCompare(*dir, m)
	if err != nil {
		return err
	}
	if !*quiet {
		fmt.Fprintf(e.stderr, "apiperf: wrote %s; open %s\n", strings.Join(paths, ", "), filepath.Join(*dir, report.CompareHTMLFile))
	}
	return nil
}
