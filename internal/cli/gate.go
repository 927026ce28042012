package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/apiperf/apiperf/compare"
	"github.com/apiperf/apiperf/outfile"
	"github.com/apiperf/apiperf/report"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/store"
)

// percentValue is a percentage flag: "5%", "5" or "0.1%".
type percentValue struct{ p *float64 }

func (v percentValue) String() string { return strconv.FormatFloat(*v.p, 'g', -1, 64) + "%" }
func (v percentValue) Type() string   { return "percent" }
func (v percentValue) Set(s string) error {
	f, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	if err != nil {
		return fmt.Errorf("%q is not a percentage like 5%% or 0.1%%", s)
	}
	*v.p = f
	return nil
}

// gateFlags are gate's flags: the two runs, the budgets, the outputs.
type gateFlags struct {
	cfg                   compare.GateConfig
	baseRef, curRef, db   *string
	mdOut, jsonOut        *string
	allowMismatch, paired *bool
	strict                *bool
	ci                    ciFlags // --junit (objective.go)
}

func (f *gateFlags) register(fs *pflag.FlagSet) {
	f.cfg = compare.DefaultGateConfig
	f.baseRef = fs.String("baseline", "", "the baseline: a run directory, a run.json, a run id (as apiperf history lists them), or a history query (label=branch:main: the newest run of the same target and load shape on main)")
	f.allowMismatch = fs.Bool("allow-mismatch", false, "compare with a baseline of another URL, method, scenario or load shape (warns)")
	f.curRef = fs.String("current", "latest", "the current run: a run directory, a run.json or a history query")
	f.db = fs.String("db", defaultDB(), "history database for queries (env "+dbEnv+")")
	fs.Var(percentValue{&f.cfg.MaxQPSDrop}, "max-qps-drop", "fail when median QPS drops by more than this, significantly")
	fs.Var(percentValue{&f.cfg.MaxP99Rise}, "max-p99-rise", "fail when median p99 latency rises by more than this, significantly")
	fs.Var(percentValue{&f.cfg.MaxErrorRate}, "max-error-rate", "fail when the error rate is above this and significantly above the baseline's")
	fs.Float64Var(&f.cfg.Alpha, "alpha", compare.DefaultAlpha, "significance level of the Mann-Whitney U test")
	f.paired = fs.Bool("ab", false, "paired comparison of runs saved by apiperf ab -o DIR (--baseline DIR/a.json --current DIR/b.json): steps of the same level and repetition are pairs")
	f.mdOut = fs.String("markdown", "", "write a Markdown summary (for a pull-request comment) to this file (- for stdout)")
	f.jsonOut = fs.String("json", "", "write the result as JSON to this file (- for stdout)")
	f.strict = strictConditionsFlag(fs) // conditions.go
	f.ci.register(fs, false)
}

func cmdGate(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet("gate", e)
	var f gateFlags
	f.register(fs)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: apiperf gate --baseline REF [--current REF] [flags]\n\n"+
			"Fail (exit 1) when the current run is significantly and over budget slower than the baseline,\n"+
			"level by level, over the repetitions of each level (run with --count 5 or more). Exit 2: bad input or missing data.\n"+
			"Exit 3: inconclusive (a change over budget, not significant: more repetitions may decide).\n\n"+
			"A baseline is a run id, a label you set (--label), or \"the newest run of the same URL, method, scenario\n"+
			"and load shape\" that a query selects: the git labels apiperf adds (branch, commit) only narrow it.\n\n%s", fs.FlagUsages())
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *f.baseRef == "" {
		return usagef("gate: no --baseline given (a run directory, a run.json or a history query such as label=branch:main)")
	}
	if fs.NArg() > 0 {
		return usagef("gate: unexpected argument %q", fs.Arg(0))
	}
	if err := f.cfg.Validate(); err != nil {
		return usagef("gate: %w", err)
	}
	if err := checkFiles(*f.mdOut, *f.jsonOut, f.ci.junit); err != nil {
		return err
	}
	start := time.Now()
	h := &lazyHistory{path: *f.db}
	defer h.close()
	cur, _, err := resolveRun(ctx, *f.curRef, "", h.open)
	if err != nil {
		return asUsage(fmt.Errorf("gate: current: %w", err))
	}
	base, baseName, err := resolveBaseline(ctx, *f.baseRef, cur, h.open)
	if err != nil {
		return asUsage(fmt.Errorf("gate: baseline: %w", err))
	}
	if *f.paired { // A and B are different targets by design: no identity check
		return f.pairedGate(e, base, cur, baseName, start)
	}
	return f.gate(ctx, e, h, base, cur, baseName, start)
}

// lazyHistory opens the history database when a query first needs it.
type lazyHistory struct {
	path string
	db   *store.DB
}

func (h *lazyHistory) open() (*store.DB, error) {
	if h.db == nil {
		db, err := openHistory(h.path)
		if err != nil {
			return nil, err
		}
		h.db = db
	}
	return h.db, nil
}

func (h *lazyHistory) close() {
	if h.db != nil {
		h.db.Close()
	}
}

// pairedGate is gate --ab: the paired comparison of ab's two saved runs.
func (f *gateFlags) pairedGate(e *env, base, cur *result.Run, baseName string, start time.Time) error {
	res, err := compare.AB(base, cur, f.cfg)
	if err != nil {
		return usagef("gate --ab: %w", err)
	}
	res.A, res.B = baseName, *f.curRef
	res.SetConditions(compare.CheckConditions(base, cur, "baseline", "current"))
	res.StrictConditions = *f.strict
	err = abReport(e, res, *f.mdOut, *f.jsonOut, false)
	reports := errors.Join(f.ci.finish(e, "gate", res.A+" vs "+res.B, start, nil, report.CheckCases("gate", res.Lines())), summarize(res.Markdown))
	return ciOutcome(err, reports, nil)
}

// gate compares the current run with the baseline, over the baseline's history of noise
// when the baseline came from a history query.
func (f *gateFlags) gate(ctx context.Context, e *env, h *lazyHistory, base, cur *result.Run, baseName string, start time.Time) error {
	if diffs := store.IdentityOf(cur).Differences(store.IdentityOf(base)); len(diffs) > 0 {
		if !*f.allowMismatch {
			return usagef("gate: the baseline is another experiment: %s; pass --allow-mismatch to compare anyway", strings.Join(diffs, "; "))
		}
		fmt.Fprintf(e.stderr, "apiperf: warning: comparing different experiments (--allow-mismatch): %s\n", strings.Join(diffs, "; "))
	}
	hist, fromHistory, err := baselineHistory(ctx, *f.baseRef, cur, h.open)
	if err != nil {
		return fmt.Errorf("gate: baseline history: %w", err)
	}
	var g *compare.GateResult
	if fromHistory {
		g, err = compare.GateHistory(base, cur, f.cfg, hist)
	} else {
		g, err = compare.Gate(base, cur, f.cfg)
	}
	if err != nil {
		return usagef("gate: %w", err)
	}
	g.Baseline, g.Current = baseName, *f.curRef
	g.SetConditions(compare.CheckConditions(base, cur, "baseline", "current"))
	g.StrictConditions = *f.strict
	if err := writeResults(e, *f.mdOut, *f.jsonOut, g.Markdown, g.JSON, g.Text); err != nil {
		return err
	}
	reports := errors.Join(f.ci.finish(e, "gate", g.Current+" against "+g.Baseline, start, nil, report.CheckCases("gate", g.Lines())), summarize(g.Markdown))
	return ciOutcome(outcomeErr(g.Outcome(), g.Conditions), reports, nil)
}

// writeOut renders with write into the file path, or stdout for "-".
func writeOut(e *env, path string, write func(w io.Writer) error) error {
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return err
	}
	if path == "-" {
		_, err := e.stdout.Write(b.Bytes())
		return err
	}
	if err := outfile.Write(path, b.Bytes()); err != nil {
		return err
	}
	return nil
}

// baselineHistory returns, when ref is a history query (not a file, not a run id), the recent
// runs it selects of cur's experiment, from which the gate learns the run-to-run noise.
func baselineHistory(ctx context.Context, ref string, cur *result.Run, open func() (*store.DB, error)) ([]*result.Run, bool, error) {
	if _, err := os.Stat(ref); err == nil {
		return nil, false, nil
	}
	flt, err := store.ParseQuery(ref)
	if err != nil || flt.ID != 0 {
		return nil, false, nil
	}
	db, err := open()
	if err != nil {
		return nil, false, err
	}
	runs, err := db.Similar(ctx, flt, cur, compare.MaxNoiseRuns)
	return runs, true, err
}

// resolveBaseline finds the baseline of cur: a run.json or run directory when ref names
// one, else the history's choice for the query ref (store.DB.Baseline).
// It also returns how to name the baseline in the gate's output: the path, or the query and
// the id it chose.
func resolveBaseline(ctx context.Context, ref string, cur *result.Run, open func() (*store.DB, error)) (*result.Run, string, error) {
	if _, err := os.Stat(ref); err == nil {
		r, err := result.Load(ref)
		return r, ref, err
	}
	flt, err := store.ParseQuery(ref)
	if err != nil {
		return nil, "", fmt.Errorf("%q is not a run directory, a run.json or a history query (nor a run id): %w", ref, err)
	}
	db, err := open()
	if err != nil {
		return nil, "", err
	}
	r, id, err := db.Baseline(ctx, flt, cur)
	if err != nil {
		return nil, "", err
	}
	if flt.ID != 0 {
		return r, fmt.Sprintf("run #%d", id), nil
	}
	return r, fmt.Sprintf("%s (run #%d)", ref, id), nil
}

// resolveRun finds a run: a run.json or run directory when ref names one, else a history
// query whose newest match (other than the run keyed exclude) is taken. It returns the run
// and its history key.
func resolveRun(ctx context.Context, ref, exclude string, open func() (*store.DB, error)) (*result.Run, string, error) {
	if _, err := os.Stat(ref); err == nil {
		r, err := result.Load(ref)
		if err != nil {
			return nil, "", err
		}
		return r, store.Key(r), nil
	}
	flt, err := store.ParseQuery(ref)
	if err != nil {
		return nil, "", fmt.Errorf("%q is not a run directory, a run.json or a history query: %w", ref, err)
	}
	db, err := open()
	if err != nil {
		return nil, "", err
	}
	flt.Limit = 0 // "latest" is the newest run that is not the current one
	runs, err := db.List(ctx, flt)
	if err != nil {
		return nil, "", err
	}
	for i := len(runs) - 1; i >= 0; i-- {
		r, err := db.Run(ctx, runs[i].ID)
		if err != nil {
			return nil, "", err
		}
		if k := store.Key(r); k != exclude {
			return r, k, nil
		}
	}
	return nil, "", errors.New("no recorded run matches " + strconv.Quote(ref) + " in " + db.Path())
}
