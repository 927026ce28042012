package cli

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/compare"
	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/scenario"
	"github.com/apiperf/apiperf/store"
	"github.com/apiperf/apiperf/target"
)

// startTarget runs a built-in target for the test and returns its URL.
func startTarget(t *testing.T, cfg target.Config) string {
	t.Helper()
	srv, err := target.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv.URL()
}

// TestABCommand: B answers 3 ms later than A; `ab` runs them alternately, fails B on QPS and
// p99 (exit 1) looking after 9, 18 or 27 pairs (usually the first: how soon is a matter of
// timing, not asserted here), saves both runs, and `gate --ab` over the saved runs agrees.
func TestABCommand(t *testing.T) {
	a := startTarget(t, target.Config{})
	b := startTarget(t, target.Config{Delay: 3 * time.Millisecond})
	dir := t.TempDir()
	code, stdout, stderr := runCLI(t, "ab", "-c2", "-t1", "-d150ms", "--warmup", "0", "--count", "9", "-o", dir, a+"/healthz", b+"/healthz")
	if code != ExitFailed || !strings.Contains(stdout, "ab: FAIL") || !strings.Contains(stdout, "QPS") ||
		!strings.Contains(stdout, "FAIL: significant and over budget") || !strings.Contains(stdout, "would be detected 95% of the time") ||
		!strings.Contains(stdout, "over 3 gated checks x 3 looks") {
		t.Fatalf("apiperf ab A vs A+3ms = exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit 1, a significant regression, 3 looks and the power", code, stdout, stderr)
	}
	for _, want := range []string{"pairs in ABBA order", "c=2 pair 1 (of up to 27) A:", "c=2 pair 2 (of up to 27) B:", "c=2 pair 9 (of up to 27) A:"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	idx := func(s string) int { return strings.Index(stderr, s) }
	if !(idx("pair 2 (of up to 27) B:") < idx("pair 2 (of up to 27) A:")) {
		t.Errorf("pair 2 ran A before B (want ABBA):\n%s", stderr)
	}
	code, stdout, stderr = runCLI(t, "gate", "--ab", "--baseline", filepath.Join(dir, "a.json"), "--current", filepath.Join(dir, "b.json"))
	if code != ExitFailed || !strings.Contains(stdout, "ab: FAIL") {
		t.Errorf("gate --ab over the saved runs = exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit 1 and FAIL", code, stdout, stderr)
	}
}

func TestABBadInput(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"ab", "http://127.0.0.1:1/"}, "want two URLs"},
		{[]string{"ab", "--count", "4", "http://127.0.0.1:1/", "http://127.0.0.1:2/"}, "--count 4: 4 pairs cannot show a significant change at alpha 0.05 over 3 checks x 3 looks; use --count 9"},
		{[]string{"ab", "--count", "4", "--max-pairs", "4", "http://127.0.0.1:1/", "http://127.0.0.1:2/"}, "over 3 checks x 1 looks; use --count 7"},
		{[]string{"ab", "--count", "10", "--max-pairs", "5", "http://127.0.0.1:1/", "http://127.0.0.1:2/"}, "--max-pairs 5: want --count (10) to 1000"},
		{[]string{"ab", "--levels", "2,4", "--rates", "5", "http://127.0.0.1:1/", "http://127.0.0.1:2/"}, "give --levels or --rates, not both"},
		{[]string{"ab", "--max-qps-drop", "-3", "http://127.0.0.1:1/", "http://127.0.0.1:2/"}, "max QPS drop -3%"},
	} {
		code, _, stderr := runCLI(t, tt.args...)
		if code != ExitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("apiperf %s = exit %d, stderr %q; want exit 2 and %q", strings.Join(tt.args, " "), code, stderr, tt.want)
		}
	}
}

// ab takes --warmup as sweep does (wrk's forms: a bare number is seconds): the bad input
// below is refused for --count alone, not for --warmup 2.
func TestABWarmupLikeSweep(t *testing.T) {
	args := []string{"ab", "--warmup", "2", "--count", "4", "http://127.0.0.1:1/", "http://127.0.0.1:2/"}
	code, _, stderr := runCLI(t, args...)
	if code != ExitUsage || strings.Contains(stderr, "warmup") || !strings.Contains(stderr, "--count 4") {
		t.Errorf("apiperf %s = exit %d, stderr %q; want exit 2 for --count alone", strings.Join(args, " "), code, stderr)
	}
}

// seededRun is run i of a history: five repetitions of c=10 at about qps req/s.
func seededRun(url string, start time.Time, qps float64, rng *rand.Rand) *result.Run {
	r := &result.Run{Version: result.Version, Tool: "apiperf test", Kind: result.KindRun, Command: []string{"apiperf", "run", url},
		Labels: map[string]string{"branch": "main"}, Scenario: scenario.Scenario{URL: url},
		Load: load.Config{Connections: 10, Threads: 1, Duration: measure.Duration(time.Second)}, Start: start, End: start.Add(5 * time.Second)}
	for i := range 5 {
		n := int64(math.Round(qps * (1 + 0.01*rng.NormFloat64())))
		h := measure.NewHistogram()
		h.RecordN(time.Millisecond, n)
		r.Steps = append(r.Steps, &measure.Step{Label: "c=10", Rep: i, Concurrency: 10, Elapsed: measure.Duration(time.Second),
			Attempts: n, Requests: n, Successes: n, Latency: h, AllAttempts: h})
	}
	return r
}

// TestHistoryTrendChangePoint: a history of 30 runs whose QPS steps down by 10% from the
// 16th run on (2% run-to-run noise) shows one change point, at run #16.
func TestHistoryTrendChangePoint(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "history.db")
	h, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(10, 10))
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	const url = "http://127.0.0.1:8080/api"
	for i := range 30 {
		qps := 1000 * (1 + 0.02*rng.NormFloat64())
		if i >= 15 {
			qps *= 0.9
		}
		if _, _, err := h.Record(context.Background(), seededRun(url, t0.Add(time.Duration(i)*time.Hour), qps, rng), ""); err != nil {
			t.Fatal(err)
		}
	}
	h.Close()
	code, stdout, stderr := runCLI(t, "history", "trend", "--db", db, "--metric", "qps", "--dir", dir)
	want := fmt.Sprintf("change point: run GET %s c=10: -", url)
	if code != ExitOK || strings.Count(stdout, "change point: ") != 1 || !strings.Contains(stdout, want) || !strings.Contains(stdout, "% at run #16 (") {
		t.Fatalf("history trend = exit %d\nstdout:\n%s\nstderr:\n%s\nwant one change point, a drop at run #16", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "E-divisive") {
		t.Errorf("stdout does not name the method:\n%s", stdout)
	}
}

// TestGateLearnsNoise: the baseline is a history query whose runs drift by about 3%; a
// current run 7% slower is over the 5% budget but within that noise: it passes and says why.
func TestGateLearnsNoise(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "history.db")
	h, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 3))
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	const url = "http://127.0.0.1:8080/api"
	var last float64
	for i := range 12 {
		last = 1000 * (1 + 0.03*rng.NormFloat64())
		if _, _, err := h.Record(context.Background(), seededRun(url, t0.Add(time.Duration(i)*time.Hour), last, rng), ""); err != nil {
			t.Fatal(err)
		}
	}
	cur := seededRun(url, t0.Add(20*time.Hour), last*0.93, rng)
	cur.Labels = map[string]string{"branch": "feature"}
	if _, _, err := h.Record(context.Background(), cur, ""); err != nil {
		t.Fatal(err)
	}
	h.Close()
	code, stdout, stderr := runCLI(t, "gate", "--db", db, "--baseline", "label=branch:main", "--current", "label=branch:feature")
	if code != ExitOK || !strings.Contains(stdout, "within the history's run-to-run noise") {
		t.Errorf("gate against a noisy history = exit %d\nstdout:\n%s\nstderr:\n%s\nwant a pass within the noise band", code, stdout, stderr)
	}
	// The same comparison by run id does not learn noise: the 7% drop fails the budget.
	code, stdout, _ = runCLI(t, "gate", "--db", db, "--baseline", "12", "--current", "label=branch:feature")
	if code != ExitFailed {
		t.Errorf("gate --baseline 12 = exit %d\nstdout:\n%s\nwant exit 1 (no noise band for a baseline given by id)", code, stdout)
	}
}

// TestABRecordsHistory: `ab` records both sides in the history (a real SQLite file) as two
// runs linked by the ab label, even for one URL against itself; `history` lists them, a
// label query finds each side, the A side counts as history of its URL and load shape for
// the gate's noise learning, and the pair read back from the database judges as it did.
func TestABRecordsHistory(t *testing.T) {
	a := startTarget(t, target.Config{})
	db := filepath.Join(t.TempDir(), "h", "history.db")
	url := a + "/healthz"
	code, stdout, stderr := runCLI(t, "ab", "-q", "-c2", "-t1", "-d100ms", "--warmup", "0", "--count", "9", "--max-pairs", "9",
		"--db", db, "--label", "ci=1", "--label-a", "branch=main", url, url)
	if code == ExitUsage {
		t.Fatalf("apiperf ab = exit 2: %s", stderr)
	}
	code, list, stderr := runCLI(t, "history", "--db", db)
	if code != ExitOK || strings.Count(list, url) != 2 || !strings.Contains(list, "ab-side=A branch=main ci=1") || !strings.Contains(list, "ab-side=B ci=1") ||
		!strings.Contains(list, "c=2 x9") {
		t.Fatalf("history after ab = exit %d\n%s%s\nwant two runs of %s, sides A (branch=main) and B, 9 steps each", code, list, stderr, url)
	}
	h, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ctx := context.Background()
	side := func(s string) *result.Run {
		t.Helper()
		es, err := h.List(ctx, store.Filter{Labels: map[string]string{abSideLabel: s}})
		if err != nil || len(es) != 1 {
			t.Fatalf("history runs labelled %s=%s: %d, err %v; want 1", abSideLabel, s, len(es), err)
		}
		r, err := h.Run(ctx, es[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	ra, rb := side("A"), side("B")
	if ra.AB == nil || rb.AB == nil || ra.AB.ID != rb.AB.ID || ra.Labels[abLabel] != ra.AB.ID || len(ra.AB.Order) != 18 || ra.AB.Looks != 1 ||
		ra.Command[1] != "ab" {
		t.Fatalf("recorded ab runs: A %+v labels %v command %v, B %+v; want one shared id, 18 steps in order, 1 look, command apiperf ab", ra.AB, ra.Labels, ra.Command, rb.AB)
	}
	// A later `run` of the same URL and load shape on main learns its noise from the A side.
	cur := &result.Run{Kind: result.KindRun, Scenario: scenario.Scenario{URL: url}, Load: ra.Load, Start: time.Now()}
	similar, err := h.Similar(ctx, store.Filter{Labels: map[string]string{"branch": "main"}}, cur, 20)
	if err != nil || len(similar) != 1 || similar[0].AB == nil || similar[0].AB.Side != "A" {
		t.Errorf("Similar(branch=main, a run of %s c=2) = %d runs, err %v; want the ab A side", url, len(similar), err)
	}
	res, err := compare.AB(ra, rb, compare.DefaultGateConfig)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Contains(stdout, "ab: PASS"); got != res.Pass() {
		t.Errorf("ab printed PASS %v, the recorded pair judges %v:\n%s", got, res.Pass(), stdout)
	}
}
