package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/report"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/store"
	"github.com/apiperf/apiperf/sweep"
)

// dbEnv overrides the default history database path (handy in CI and tests).
const dbEnv = "APIPERF_DB"

func defaultDB() string {
	if p := os.Getenv(dbEnv); p != "" {
		return p
	}
	return store.DefaultPath
}

// historyFlags say where and how runs are recorded in the history database.
type historyFlags struct {
	db        string
	labels    []string
	noHistory bool
}

func (f *historyFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.db, "db", defaultDB(), "history database (env "+dbEnv+")")
	fs.StringArrayVar(&f.labels, "label", nil, "label the run key=value in the history (repeatable; git commit and branch are added)")
	fs.BoolVar(&f.noHistory, "no-history", false, "do not record the run in the history database")
}

// label puts the --label values, inside CI the commit, branch, pull request and runner its
// environment names (store.CILabels), and inside a git repository the commit and branch into
// r.Labels, so that they are saved in run.json too. Call it before the load starts.
func (f *historyFlags) label(ctx context.Context, r *result.Run) error {
	labels, err := parseLabels(f.labels)
	if err != nil {
		return usageError{err}
	}
	// --label first, then what a CI system's environment says, then git's working copy.
	for _, found := range []map[string]string{store.CILabels(os.Getenv), gitLabels(ctx)} {
		for k, v := range found {
			if _, set := labels[k]; !set {
				labels[k] = v
			}
		}
	}
	if len(labels) > 0 {
		r.Labels = labels
	}
	return nil
}

// parseLabels reads key=value pairs.
func parseLabels(in []string) (map[string]string, error) {
	out := map[string]string{}
	var errs []error
	for _, l := range in {
		k, v, ok := strings.Cut(l, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, ",:") {
			errs = append(errs, fmt.Errorf("--label %q: want key=value (a key without , or :)", l))
			continue
		}
		out[k] = v
	}
	return out, errors.Join(errs...)
}

// gitLabels returns the commit and branch of the git repository around the working
// directory, or nothing outside one.
func gitLabels(ctx context.Context) map[string]string {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	// One git process for both: the commit on the first line, the branch on the second.
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "HEAD", "--abbrev-ref", "HEAD").Output()
	m := map[string]string{}
	if err != nil {
		return m
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) > 0 && lines[0] != "" {
		m["commit"] = lines[0]
	}
	if len(lines) > 1 && lines[1] != "" && lines[1] != "HEAD" {
		m["branch"] = lines[1]
	}
	return m
}

func cmdHistory(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "import":
			return cmdHistoryImport(ctx, e, args[1:])
		case "trend":
			return cmdHistoryTrend(ctx, e, args[1:])
		case "record":
			return cmdHistoryRecord(ctx, e, args[1:])
		case "list":
			args = args[1:]
		}
	}
	return cmdHistoryList(ctx, e, args)
}

// filterFlags select runs from the history.
type filterFlags struct {
	db, url, kind, since, until string
	labels                      []string
	limit                       int
	conds                       []string // --condition KEY=VALUE
}

func (f *filterFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.db, "db", defaultDB(), "history database (env "+dbEnv+")")
	fs.StringVar(&f.url, "url", "", "only runs of this URL")
	fs.StringArrayVar(&f.labels, "label", nil, "only runs with this label key=value (repeatable)")
	fs.StringVar(&f.kind, "kind", "", "only runs of this kind: run, sweep or capacity")
	fs.StringVar(&f.since, "since", "", "only runs started at or after this date (2026-01-31 or RFC 3339)")
	fs.StringVar(&f.until, "until", "", "only runs started before this date")
	fs.IntVar(&f.limit, "limit", 0, "only the newest N runs")
	fs.StringArrayVar(&f.conds, "condition", nil, "only runs measured on these conditions KEY=VALUE (repeatable), e.g. cpu=xeon, cpus=8, kernel=6.1, rev=1a2b3c, race=false, busy=false, known=true")
}

func (f *filterFlags) build() (store.Filter, error) {
	var errs []error
	labels, err := parseLabels(f.labels)
	errs = append(errs, err)
	flt := store.Filter{URL: f.url, Kind: f.kind, Limit: f.limit}
	if len(labels) > 0 {
		flt.Labels = labels
	}
	if f.since != "" {
		flt.Since, err = store.ParseDate(f.since)
		errs = append(errs, err)
	}
	if f.until != "" {
		flt.Until, err = store.ParseDate(f.until)
		errs = append(errs, err)
	}
	if f.limit < 0 {
		errs = append(errs, fmt.Errorf("--limit %d is negative", f.limit))
	}
	for _, c := range f.conds {
		if err := flt.AddCondition(c); err != nil {
			errs = append(errs, fmt.Errorf("--condition %q: %w", c, err))
		}
	}
	return flt, asUsage(errors.Join(errs...))
}

// list returns the recorded runs the filter flags select.
func (f *filterFlags) list(ctx context.Context) ([]store.Entry, error) {
	flt, err := f.build()
	if err != nil {
		return nil, err
	}
	db, err := openHistory(f.db)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return db.List(ctx, flt)
}

// openHistory opens an existing history database for reading.
func openHistory(path string) (*store.DB, error) {
	if store.IsPostgres(path) {
		db, err := store.Open(path)
		return db, err // a database that is down is no bad input
	}
	if _, err := os.Stat(path); err != nil {
		return nil, usagef("no history database at %s (runs are recorded there by apiperf run and sweep; --db to point elsewhere)", path)
	}
	db, err := store.Open(path)
	return db, asUsage(err) // a database that is not one is bad input, for every command
}

func cmdHistoryList(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet("history", e)
	var ff filterFlags
	ff.register(fs)
	asJSON := fs.Bool("json", false, "print the runs as JSON")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: apiperf history [list] [flags]\n       apiperf history import DIR...\n       apiperf history trend --metric p99|qps|success [flags]\n\nList recorded runs, oldest first.\n\n%s", fs.FlagUsages())
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("history: unexpected argument %q (commands: list, import, trend)", fs.Arg(0))
	}
	runs, err := ff.list(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		b, err := json.MarshalIndent(runs, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "%s\n", b)
		return nil
	}
	return report.HistoryList(e.stdout, runs)
}

// trendMetrics are the metrics `history trend` charts, read from a level as every report shows it.
var trendMetrics = map[string]func(sweep.Level) float64{
	"qps":     func(l sweep.Level) float64 { return l.QPS },
	"p99":     func(l sweep.Level) float64 { return l.Millis(l.P99) },
	"success": func(l sweep.Level) float64 { return l.Success },
	// the p99 time to a stream's first message (gRPC server streams, SSE): NaN without streams
	"first_p99": func(l sweep.Level) float64 {
		if l.Stream == nil {
			return math.NaN()
		}
		return l.Millis(measure.Duration(l.Percentile("first_p99")))
	},
}

func cmdHistoryImport(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet("history import", e)
	db := fs.String("db", defaultDB(), "history database (env "+dbEnv+")")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: apiperf history import [--db FILE] DIR...\n\nRecord every run.json under DIR (recursively) that the history lacks; rebuilds a lost or damaged database.\n\n%s", fs.FlagUsages())
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("history import: no directory given (usage: apiperf history import DIR...)")
	}
	for _, dir := range fs.Args() {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return usagef("history import: %s is not a directory", dir)
		}
	}
	h, err := store.Open(*db)
	if err != nil {
		return asUsage(err)
	}
	defer h.Close()
	for _, dir := range fs.Args() {
		st, err := h.Import(ctx, dir)
		if err != nil {
			return err
		}
		for _, s := range st.Skipped {
			fmt.Fprintf(e.stderr, "apiperf: warning: skipped %s\n", s)
		}
		fmt.Fprintf(e.stdout, "%s: %d run.json found, %d added to %s\n", dir, st.Found, st.Added, *db)
	}
	return nil
}

func cmdHistoryTrend(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet("history trend", e)
	var ff filterFlags
	ff.register(fs)
	metric := fs.String("metric", "p99", "metric to chart: p99, qps, success or first_p99 (streams: the p99 time to the first message)")
	level := fs.String("level", "", "only this level (e.g. c=50); default: every level")
	dir := fs.String("dir", DefaultSweepDir, "write the page and charts into this directory")
	out := fs.StringP("out", "o", "", "file name stem: OUT.html, and OUT.svg/.png or OUT-<target>.svg/.png (default DIR/trend-METRIC)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: apiperf history trend --metric p99|qps|success [flags]\n\n"+
			"Chart a metric across recorded runs over time (one line per level, as its reports show it),\n"+
			"one chart per target (kind, method and URL); --url, --kind and --label pick targets.\n\n%s", fs.FlagUsages())
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	get, ok := trendMetrics[*metric]
	if !ok {
		return usagef("history trend: --metric %q: want p99, qps, success or first_p99", *metric)
	}
	if fs.NArg() > 0 {
		return usagef("history trend: unexpected argument %q", fs.Arg(0))
	}
	runs, err := ff.list(ctx)
	if err != nil {
		return err
	}
	trs := trendRuns(runs, get, *level)
	if len(trs) == 0 {
		return usagef("history trend: no recorded run matches (%s)", ff.db)
	}
	base := *out
	if base == "" {
		base = filepath.Join(*dir, "trend-"+*metric)
	}
	if err := checkFiles(base + ".html"); err != nil {
		return err // no chain of directories made that the user did not name
	}
	if d := filepath.Dir(base); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("history trend: %w", err)
		}
	}
	set := report.NewTrendSet(*metric, trs)
	paths, err := set.WriteFiles(base)
	if err != nil {
		return err
	}
	charts := "charts: " + strings.Join(paths[1:], ", ")
	if len(set.Trends) > 1 { // one line, however many targets: the page shows them all
		charts = fmt.Sprintf("%s beside it, %s-<target>.svg and .png", report.Plural(len(paths)-1, "chart"), filepath.Base(base))
	}
	fmt.Fprintf(e.stdout, "%s of %s over %s: open %s (%s)\n", *metric, report.Plural(len(set.Trends), "target"),
		report.Plural(len(trs), "run"), paths[0], charts)
	for _, t := range set.Trends {
		for _, c := range t.Changes {
			fmt.Fprintf(e.stdout, "change point: %s %s\n", t.Target, c.String(*metric))
		}
		for _, c := range t.ConditionChanges() { // report/trend_conditions.go
			fmt.Fprintf(e.stdout, "conditions changed: %s at run #%d: %s\n", t.Target, t.Runs[c.Run].ID, strings.Join(c.Fields, ", "))
		}
	}
	if len(trs) >= 6 {
		fmt.Fprintf(e.stdout, "change points by %s\n", report.ChangeMethod)
	}
	return nil
}

// trendRuns are the points of a trend: per run, the metric at each level (or only at level),
// each run under its Target (kind, method, URL and protocol). A capacity search gives one
// point, its answer, whatever rates it probed on the way.
func trendRuns(runs []store.Entry, get func(sweep.Level) float64, level string) []report.TrendRun {
	var trs []report.TrendRun
	for _, r := range runs {
		tr := report.TrendRun{ID: r.ID, Start: r.Start, URL: r.URL, Target: r.Target(),
			Commit: r.Labels["commit"], Values: map[string]float64{}, Conditions: r.Conditions}
		if r.Kind == result.KindCapacity {
			if l, ok := r.Headline(); ok && (level == "" || l.Label == level) {
				tr.Values["answer"] = get(l)
			}
		} else {
			for _, l := range r.Levels {
				if level == "" || l.Label == level {
					tr.Values[l.Label] = get(l)
				}
			}
		}
		if len(tr.Values) > 0 {
			trs = append(trs, tr)
		}
	}
	return trs
}
