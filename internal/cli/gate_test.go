package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/compare"
	"github.com/apiperf/apiperf/conditions"
	"github.com/apiperf/apiperf/internal/testenv"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/target"
)

// gateCLI runs apiperf in-process and returns the exit code, stdout and stderr.
func gateCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// measureTarget loads a built-in target with delay for count repetitions of 0.5 s, saves
// run.json under dir/name and records it in db with label side=name.
func measureTarget(t *testing.T, delay time.Duration, db, dir, name string) string {
	t.Helper()
	srv, err := target.Start(target.Config{Delay: delay})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	out := filepath.Join(dir, name, "run.json")
	os.MkdirAll(filepath.Dir(out), 0o755)
	code, stdout, stderr := gateCLI(t, "run", "-c", "4", "-t", "1", "-d", "500ms", "--count", "5",
		"--db", db, "--label", "side="+name, "-o", out, "-q", srv.URL()+"/healthz")
	if code != ExitOK || !strings.Contains(stdout, "of 5 repetitions:") {
		t.Fatalf("apiperf run --count 5 = exit %d, stdout %q, stderr %q; want 0 and a median line", code, stdout, stderr)
	}
	r, err := result.Load(out)
	if err != nil || len(r.Steps) != 5 || r.Steps[4].Rep != 4 || r.Labels["side"] != name {
		t.Fatalf("run.json: %v; want 5 steps with Rep 0..4 and label side=%s", err, name)
	}
	return out
}

// The gate against the built-in target: the same target twice passes, +20 ms fails on p99.
// A timing test: the p99 comparison needs a generator with steady CPU (the serial pass).
func TestTimingGateAgainstTarget(t *testing.T) {
	testenv.Timing(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "history.db")
	base := measureTarget(t, 0, db, dir, "base")
	same := measureTarget(t, 0, db, dir, "same")
	// 20 ms, not 2: beside stress-ng the baseline's p99 is the scheduler's (3-5 ms, ±96% rep to
	// rep), and a +2 ms target's p99 rose +50% with p=0.095 over 5+5 reps in CI (2026-12-02):
	// inconclusive, rightly. Whether the gate sees small rises is its power estimate's job;
	// this test checks that a rise no scheduler makes is a significant p99 failure.
	measureTarget(t, 20*time.Millisecond, db, dir, "slow") // found below by its label

	// Same target twice. The machine is shared and noisy, so the budgets are wide here:
	// this checks the wiring and that noise alone is not "significant and over budget".
	// Each target listens on its own random port, so each pair is --allow-mismatch.
	// Beside stress-ng the same target's QPS moved -54% between the two (noise ±31%, busy-ci
	// 2026-12-04): over budget and not significant is then the honest answer, never a failure.
	code, stdout, stderr := gateCLI(t, "gate", "--baseline", base, "--current", same,
		"--max-qps-drop", "50%", "--max-p99-rise", "200%", "--db", db, "--allow-mismatch")
	pass := code == ExitOK && strings.Contains(stdout, "gate: PASS")
	busyInconclusive := code == ExitInconclusive && strings.Contains(stdout, "gate: INCONCLUSIVE") &&
		strings.Contains(stdout, "warning: busy machine")
	if !pass && !busyInconclusive {
		t.Errorf("gate same vs same = exit %d, stdout %q, stderr %q; want exit 0 and PASS (or, on a machine it calls busy, exit 3 and INCONCLUSIVE)", code, stdout, stderr)
	}

	// +20 ms per response, found through history queries, default budgets.
	md := filepath.Join(dir, "gate.md")
	js := filepath.Join(dir, "gate.json")
	code, stdout, stderr = gateCLI(t, "gate", "--baseline", "label=side:base", "--current", "label=side:slow",
		"--db", db, "--markdown", md, "--json", js, "--allow-mismatch")
	if code != ExitFailed || !strings.Contains(stdout, "gate: FAIL") {
		t.Fatalf("gate base vs +20ms = exit %d, stdout %q, stderr %q; want exit 1 and FAIL", code, stdout, stderr)
	}
	var g compare.GateResult
	b, _ := os.ReadFile(js)
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	// Not a size in milliseconds: on a busy machine the baseline's p99 is the scheduler's and the
	// slower target, answering fewer requests, queues less. What the gate owes is a significant
	// rise over its budget (Regression: over budget, so a rise, and beyond noise).
	p99Failed := false
	for _, c := range g.Checks {
		if c.Metric == compare.MetricP99 && c.Regression {
			p99Failed = c.Significant
		}
	}
	mdText, _ := os.ReadFile(md)
	if !p99Failed || !strings.Contains(string(mdText), "| c=4 | p99 |") || !strings.Contains(string(mdText), "FAIL: significant and over budget") {
		t.Errorf("gate JSON %s\nMarkdown %s\nwant a significant p99 regression over budget, said in the Markdown", b, mdText)
	}

	// history lists the three runs; import into a fresh database finds the same three.
	code, stdout, _ = gateCLI(t, "history", "--db", db, "--label", "side=slow")
	if code != ExitOK || strings.Count(stdout, "side=slow") != 1 || !strings.Contains(stdout, "c=4 x5") {
		t.Errorf("history --label side=slow = exit %d:\n%s\nwant one run with 5 repetitions of c=4", code, stdout)
	}
	fresh := filepath.Join(dir, "fresh.db")
	code, stdout, _ = gateCLI(t, "history", "import", "--db", fresh, dir)
	if code != ExitOK || !strings.Contains(stdout, "3 run.json found, 3 added") {
		t.Errorf("history import = exit %d, %q; want 3 found, 3 added", code, stdout)
	}
	trend := filepath.Join(dir, "trend")
	code, stdout, stderr = gateCLI(t, "history", "trend", "--db", fresh, "--metric", "p99", "-o", trend)
	if st, err := os.Stat(trend + ".html"); code != ExitOK || err != nil || st.Size() == 0 {
		t.Errorf("history trend = exit %d, %q %q, html %v; want the page written", code, stdout, stderr, err)
	}
}

func TestGateBadInputCLI(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "history.db")
	mk := func(name, label string) string {
		r := &result.Run{Version: result.Version, Kind: result.KindRun, Start: time.Now().UTC()}
		for i := range 3 {
			r.Steps = append(r.Steps, gateTestStep(label, i))
		}
		p := filepath.Join(dir, name, "run.json")
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := r.Save(p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	c10, c20 := mk("a", "c=10"), mk("b", "c=20")
	damaged := filepath.Join(dir, "damaged.db")
	os.WriteFile(damaged, bytes.Repeat([]byte("not a database "), 300), 0o644)
	tests := []struct {
		args []string
		want string // in the one-line error
	}{
		// No baseline at all.
		{[]string{"gate", "--current", c10}, "no --baseline given"},
		// A baseline that is neither a file nor a query.
		{[]string{"gate", "--baseline", "nosuch/run.json", "--current", c10}, `"nosuch/run.json" is not a run directory, a run.json or a history query`},
		// A query with no history database.
		{[]string{"gate", "--baseline", "label=branch:main", "--current", c10, "--db", db}, "no history database at"},
		// A baseline with other levels than the current run.
		{[]string{"gate", "--baseline", c10, "--current", c20}, "the baseline has no level c=20"},
		// A budget that is not a percentage.
		{[]string{"gate", "--baseline", c10, "--max-p99-rise", "lots"}, `"lots" is not a percentage`},
		// A corrupted history database.
		{[]string{"gate", "--baseline", "latest", "--current", c10, "--db", damaged}, "history database is damaged"},
		{[]string{"history", "--db", damaged}, "apiperf history import DIR"},
		// Bad labels and metrics.
		{[]string{"history", "--db", damaged, "--label", "nokey"}, "want key=value"},
		{[]string{"history", "trend", "--metric", "p42", "--db", damaged}, `--metric "p42"`},
	}
	for _, tt := range tests {
		code, _, stderr := gateCLI(t, tt.args...)
		if code != ExitUsage && !(code == ExitFailed && strings.Contains(tt.want, "import DIR")) || !strings.Contains(stderr, tt.want) {
			t.Errorf("apiperf %q = exit %d, stderr %q; want exit 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
	if b, _ := os.ReadFile(c10); len(b) == 0 {
		t.Error("a run.json was lost")
	}
}

// gateTestStep is a step of 1000 requests in 100 ms with a 1 ms latency.
func gateTestStep(label string, rep int) *measure.Step {
	h := measure.NewHistogram()
	h.RecordN(time.Millisecond, 1000)
	return &measure.Step{Label: label, Rep: rep, Elapsed: measure.Duration(100 * time.Millisecond),
		Attempts: 1000, Requests: 1000, Successes: 1000, Latency: h, AllAttempts: h}
}

// inconclusiveRuns saves a baseline and a current run whose p99 is 20% higher in the median
// but overlaps the baseline's repetitions: over budget, not significant. Each step's
// repetition pairs with the same one on the other side, for gate --ab.
func inconclusiveRuns(t *testing.T, dir string) (string, string) {
	t.Helper()
	return saveP99Run(t, dir, "base", []float64{2, 2.4, 1.6, 2.2, 1.8}, nil), saveP99Run(t, dir, "cur", []float64{2.4, 1.7, 2.9, 2.0, 2.6}, nil)
}

// saveP99Run saves dir/name.json: one step of level c=10 per p99 (ms), 10000 responses
// each over a second, with conditions cond.
func saveP99Run(t *testing.T, dir, name string, p99ms []float64, cond *conditions.Record) string {
	t.Helper()
	r := &result.Run{Version: result.Version, Kind: result.KindRun, Start: time.Now(), Conditions: cond}
	for i, p := range p99ms {
		h := measure.NewHistogram()
		h.RecordN(time.Duration(p*0.5*1e6), 9800)
		h.RecordN(time.Duration(p*1e6), 200)
		r.Steps = append(r.Steps, &measure.Step{Label: "c=10", Rep: i, Elapsed: measure.Duration(time.Second),
			Attempts: 10000, Requests: 10000, Successes: 10000, Latency: h, AllAttempts: h})
	}
	path := filepath.Join(dir, name+".json")
	if err := r.Save(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// gate --strict-conditions on runs whose conditions warn refuses them: exit 2 with the
// warning on stderr, and the report says NOT COMPARABLE (in the JSON "not_comparable"),
// never PASS.
func TestGateStrictConditionsNoPass(t *testing.T) {
	dir := t.TempDir()
	quiet := &conditions.Record{Version: conditions.Version, Steps: []conditions.StepSample{{Label: "c=10", Others: 0.05, Samples: 5}}}
	busy := &conditions.Record{Version: conditions.Version, Steps: []conditions.StepSample{{Label: "c=10", Others: 1.1, OthersMax: 1.5, Samples: 5}}}
	p99 := []float64{2, 2, 2, 2, 2}
	base, cur := saveP99Run(t, dir, "base", p99, quiet), saveP99Run(t, dir, "cur", p99, busy)
	js := filepath.Join(dir, "gate.json")
	for _, args := range [][]string{{"--json", js}, {"--ab"}} {
		code, stdout, stderr := gateCLI(t, append([]string{"gate", "--strict-conditions", "--baseline", base, "--current", cur}, args...)...)
		if code != ExitUsage || strings.Contains(stdout, "PASS") || !strings.Contains(stdout, ": NOT COMPARABLE (--strict-conditions): busy machine on current") ||
			!strings.Contains(stderr, "--strict-conditions: busy machine on current") {
			t.Errorf("gate --strict-conditions %v = exit %d, stdout %q, stderr %q; want exit 2, NOT COMPARABLE and no PASS", args, code, stdout, stderr)
		}
	}
	if b, _ := os.ReadFile(js); !strings.Contains(string(b), `"outcome": "not_comparable"`) {
		t.Errorf("gate --json: %.200s; want the outcome not_comparable", b)
	}
	// Without --strict-conditions the same runs pass, with the warning.
	if code, stdout, _ := gateCLI(t, "gate", "--baseline", base, "--current", cur); code != ExitOK || !strings.Contains(stdout, "gate: PASS") {
		t.Errorf("gate without --strict-conditions = exit %d, %q; want 0 and PASS", code, stdout)
	}
}

// A gate whose change is over budget but not significant says INCONCLUSIVE and exits 3, in
// the text, the Markdown and the JSON; not PASS with exit 0.
func TestGateInconclusiveExit(t *testing.T) {
	dir := t.TempDir()
	base, cur := inconclusiveRuns(t, dir)
	md, js := filepath.Join(dir, "gate.md"), filepath.Join(dir, "gate.json")
	code, stdout, stderr := gateCLI(t, "gate", "--baseline", base, "--current", cur, "--markdown", md, "--json", js)
	mdText, _ := os.ReadFile(md)
	jsText, _ := os.ReadFile(js)
	if code != ExitInconclusive || !strings.Contains(stdout, "gate: INCONCLUSIVE") || strings.Contains(stdout, "PASS") ||
		!strings.Contains(string(mdText), "## apiperf gate: INCONCLUSIVE") || !strings.Contains(string(jsText), `"outcome": "inconclusive"`) {
		t.Errorf("gate = exit %d, stdout %q, stderr %q\nMarkdown %s\nJSON head %.60s\nwant exit %d and INCONCLUSIVE everywhere",
			code, stdout, stderr, mdText, jsText, ExitInconclusive)
	}
	// The same runs paired (gate --ab): five pairs cannot reach the per-check alpha, so
	// B's p99 over budget is inconclusive too.
	code, stdout, stderr = gateCLI(t, "gate", "--ab", "--baseline", base, "--current", cur)
	if code != ExitInconclusive || !strings.Contains(stdout, "ab: INCONCLUSIVE") || strings.Contains(stdout, "PASS") {
		t.Errorf("gate --ab = exit %d, stdout %q, stderr %q; want exit %d and INCONCLUSIVE", code, stdout, stderr, ExitInconclusive)
	}
}
