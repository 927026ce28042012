package cli

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/report"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/sweep"
)

// sweepServeEnv makes this test binary act as `apiperf serve` when started with that
// argument, so the sweep can spawn its built-in target (os.Executable) without a build.
const sweepServeEnv = "APIPERF_SWEEP_TEST_SERVE"

func init() {
	if os.Getenv(sweepServeEnv) == "1" && len(os.Args) > 1 && os.Args[1] == "serve" {
		ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
		defer cancel()
		os.Exit(Run(ctx, os.Args[1:], os.Stdout, os.Stderr))
	}
}

// sweepCLI runs `apiperf sweep args...` in-process under ctx and returns the exit code and output.
func sweepCLI(ctx context.Context, args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := Run(ctx, append([]string{"sweep"}, args...), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// sweepLoadRun reads a sweep's run.json.
func sweepLoadRun(t *testing.T, dir string) *result.Run {
	t.Helper()
	r, err := result.Load(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatalf("reading the sweep's run.json: %v", err)
	}
	if r.Kind != result.KindSweep || r.Sweep == nil {
		t.Fatalf("run.json: kind %q, sweep %v; want a sweep", r.Kind, r.Sweep)
	}
	return r
}

func stepLabels(r *result.Run) string {
	var out []string
	for _, s := range r.Steps {
		out = append(out, fmt.Sprintf("%s#%d", s.Label, s.Rep))
	}
	return strings.Join(out, " ")
}

// sweepServer is a loopback API answering 200 (or status) to everything.
func sweepServer(t *testing.T, status int) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/api"
}

func TestSweepUsageErrors(t *testing.T) {
	const url = "http://127.0.0.1:1/never-contacted"
	tests := []struct {
		args []string
		want []string // all in stderr
	}{
		// Levels take k suffixes but must be numbers, ascending.
		{[]string{"--levels", "10,abc", url}, []string{`--levels: "abc" is not a number`}},
		{[]string{"--levels", "50,10", url}, []string{"levels must ascend: 10 after 50"}},
		// Levels and rates exclude each other, and -R is not a sweep.
		{[]string{"--levels", "10", "--rates", "5", url}, []string{"give --levels or --rates, not both"}},
		{[]string{"-R", "100", url}, []string{"sweep rates with --rates"}},
		{[]string{"--rates", "1k,fast", url}, []string{`--rates: "fast" is not a number`}},
		{[]string{"-c", "100", url}, []string{"sweep concurrency with --levels"}},
		// The objective is checked before any load.
		{[]string{"--slo", "p96<=1s", url}, []string{`unknown metric "p96"`}},
		// --vs-native compares a URL with the built-in target, so it needs a URL.
		{[]string{"--vs-native"}, []string{"--vs-native needs a URL"}},
		{[]string{url, url}, []string{"want at most one URL"}},
		// Bad stop rules.
		{[]string{"--min-success", "120", url}, []string{"success floor must be in [0, 100]%"}},
		// Every problem at once: objective, count, URL.
		{[]string{"--slo", "p99", "--count", "0", "ftp://x"}, []string{"--slo", "--count must be at least 1", "ftp"}},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		code, stdout, stderr := sweepCLI(context.Background(), append(tt.args, "--dir", dir)...)
		ok := code == ExitUsage && stdout == ""
		for _, w := range tt.want {
			ok = ok && strings.Contains(stderr, w)
		}
		if !ok {
			t.Errorf("apiperf sweep %q = exit %d, stdout %q, stderr %q; want exit 2 and %q", tt.args, code, stdout, stderr, tt.want)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("apiperf sweep %q wrote %d entries into --dir; want none", tt.args, len(entries))
		}
	}
}

// TestSweepBuiltinTarget is the end-to-end check: with no URL, sweep runs against
// `apiperf serve` in its own process and writes every output into apiperf-out/127.0.0.1-PORT.
func TestSweepBuiltinTarget(t *testing.T) {
	t.Setenv(sweepServeEnv, "1")
	dir := t.TempDir()
	code, stdout, stderr := sweepCLI(context.Background(), "--levels", "10,50,100", "--duration", "2s", "--warmup", "100ms", "--dir", dir)
	if code != ExitOK {
		t.Fatalf("apiperf sweep = exit %d, stderr %q; want 0", code, stderr)
	}
	m := regexp.MustCompile(`(?m)^report: (.*/127\.0\.0\.1-[0-9]+)/report\.html$`).FindStringSubmatch(stdout)
	if m == nil || filepath.Dir(m[1]) != dir {
		t.Fatalf("stdout %q: want a line `report: %s/127.0.0.1-PORT/report.html`", stdout, dir)
	}
	run, name := m[1], filepath.Base(m[1])
	for _, f := range []string{"run.json", "report.html", name + ".dat", name + "_qps_ttlb.png", name + "_qps_ttlb.svg",
		name + "_successrate.png", name + "_successrate.svg", name + "_latency.png", name + "_latency.svg"} {
		st, err := os.Stat(filepath.Join(run, f))
		if err != nil || st.Size() == 0 {
			t.Errorf("output %s: %v (size %d); want a non-empty file", f, err, sweepSizeOf(st))
		}
	}
	if f, err := os.Open(filepath.Join(run, name+"_qps_ttlb.png")); err == nil {
		cfg, err := png.DecodeConfig(f)
		f.Close()
		if err != nil || cfg.Width < 200 || cfg.Height < 100 {
			t.Errorf("qps_ttlb.png: %v, %dx%d; want a decodable chart", err, cfg.Width, cfg.Height)
		}
	}
	r := sweepLoadRun(t, run)
	if got := stepLabels(r); got != "c=10#0 c=50#0 c=100#0" {
		t.Errorf("run.json steps = %s; want c=10, c=50, c=100 once each", got)
	}
	sw := r.Sweep
	if len(sw.Levels) != 3 || sw.Peak < 0 || sw.Objective.String() != sweep.DefaultObjective || sw.Stop != nil || r.Name != name {
		t.Fatalf("run.json sweep = %+v, name %q; want 3 points, a peak, the default objective, no stop, name %q", sw, r.Name, name)
	}
	for _, p := range sw.Levels {
		if p.QPS <= 0 || p.Success != 100 {
			t.Errorf("%s: QPS %v success %v%%; want traffic and 100%% success from the built-in target", p.Label, p.QPS, p.Success)
		}
	}
	if !strings.Contains(stdout, "peak: "+sw.Levels[sw.Peak].Label+", ") || !strings.Contains(stdout, "knee: ") {
		t.Errorf("stdout %q lacks the peak (%s) and knee lines", stdout, sw.Levels[sw.Peak].Label)
	}
	if strings.Contains(stderr, "\r") {
		t.Errorf("stderr has progress lines though it is not a terminal: %q", stderr)
	}
	// The .dat file has the classic columns, one row per level of run.json.
	dat, _ := os.ReadFile(filepath.Join(run, name+".dat"))
	rows := strings.Split(strings.TrimSpace(string(dat)), "\n")
	if len(rows) != 3 || !strings.HasPrefix(rows[0], "10 ") || !strings.HasPrefix(rows[2], "100 ") || len(strings.Fields(rows[1])) != 4 {
		t.Errorf("%s.dat = %q; want rows for 10, 50 and 100 of four columns", name, dat)
	}
}

func sweepSizeOf(st os.FileInfo) int64 {
	if st == nil {
		return -1
	}
	return st.Size()
}

func TestSweepStopsOnFailures(t *testing.T) {
	url := sweepServer(t, http.StatusInternalServerError)
	dir := t.TempDir()
	code, stdout, stderr := sweepCLI(context.Background(), "--levels", "2,4,8", "-d", "300ms", "--warmup", "0", "--name", "fail", "--dir", dir, "--no-report", url)
	// Nothing succeeded: exit 1 (issue 12), after the stop rule and the outputs.
	if code != ExitFailed || !strings.Contains(stderr, "no request succeeded") {
		t.Fatalf("apiperf sweep = exit %d, stderr %q; want 1 and no request succeeded", code, stderr)
	}
	if !strings.Contains(stderr, "stopped: success rate 0% at c=2 is below the 50% floor") {
		t.Errorf("stderr %q does not report the success-floor stop", stderr)
	}
	r := sweepLoadRun(t, filepath.Join(dir, "fail"))
	if got := stepLabels(r); got != "c=2#0" || r.Sweep.Stop == nil || r.Sweep.Stop.Rule != sweep.RuleSuccess || r.Sweep.Stop.After != "c=2" {
		t.Errorf("run.json: steps %s, stop %+v; want one level and the success rule after c=2", got, r.Sweep.Stop)
	}
	if !strings.Contains(stdout, "knee: none: no level met p99<=500ms,success>=99.9% (c=2: success 0% < 99.9%)") ||
		!regexp.MustCompile(`c=2 .* 0\.00% +[1-9][0-9]* +status [1-9]`).MatchString(stdout) {
		t.Errorf("stdout %q: want the c=2 row with 0%% success and status errors, and no knee", stdout)
	}
	// --no-stop runs every level.
	code, _, stderr = sweepCLI(context.Background(), "--levels", "2,4,8", "-d", "200ms", "--warmup", "0", "--name", "all", "--dir", dir, "--no-stop", "--no-report", url)
	r = sweepLoadRun(t, filepath.Join(dir, "all"))
	if code != ExitFailed || stepLabels(r) != "c=2#0 c=4#0 c=8#0" || r.Sweep.Stop != nil || r.Sweep.Rules != (sweep.Rules{}) {
		t.Errorf("--no-stop: exit %d, steps %s, stop %+v, rules %+v (stderr %q); want all three levels and no rules", code, stepLabels(r), r.Sweep.Stop, r.Sweep.Rules, stderr)
	}
}

func TestSweepRatesCount(t *testing.T) {
	url := sweepServer(t, http.StatusOK)
	dir := t.TempDir()
	code, stdout, stderr := sweepCLI(context.Background(), "--rates", "50,100", "--count", "2", "-d", "500ms", "--warmup", "100ms", "--name", "rates", "--dir", dir, "--no-report", url)
	if code != ExitOK {
		t.Fatalf("apiperf sweep --rates = exit %d, stderr %q", code, stderr)
	}
	r := sweepLoadRun(t, filepath.Join(dir, "rates"))
	if got := stepLabels(r); got != "rate=50/s#0 rate=50/s#1 rate=100/s#0 rate=100/s#1" {
		t.Errorf("steps = %s; want each rate twice with Rep 0 and 1", got)
	}
	for _, s := range r.Steps {
		if s.Open == nil || (s.Open.TargetRate != 50 && s.Open.TargetRate != 100) {
			t.Errorf("%s: open-loop data %+v; want the target rate recorded", s.Label, s.Open)
		}
	}
	sw := r.Sweep
	if len(sw.Levels) != 2 || len(sw.Plan.Rates) != 2 || sw.Plan.Count != 2 || sw.Levels[1].Value != 100 || len(sw.Levels[1].Steps) != 2 {
		t.Fatalf("sweep = %+v; want 2 rate points of 2 runs each", sw)
	}
	// Achieved rate: bounds that hold on a starved -race run, where the generator sends late
	// (no more than the 60 due by the end of the 500 ms window, 120/s; some).
	if a := sw.Levels[1].Achieved; a <= 0 || a > 150 {
		t.Errorf("achieved rate at 100/s = %v; want it up to about 100", a)
	}
	if !strings.Contains(stdout, "achieved/s") || !strings.Contains(stdout, "rate=100/s") {
		t.Errorf("stdout %q: want the achieved-rate column and the rate levels", stdout)
	}
}

func TestSweepInterrupted(t *testing.T) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(5 * time.Millisecond)
		served.Add(1)
	}))
	defer srv.Close()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cancelWhenServed(t, &served, 20, cancel) // during c=2, with responses measured
	code, stdout, stderr := sweepCLI(ctx, "--levels", "2,4", "-d", "20s", "--warmup", "0", "--name", "cut", "--dir", dir, srv.URL)
	if code != ExitFailed || !strings.Contains(stderr, "interrupted during c=2") {
		t.Errorf("interrupted sweep = exit %d, stderr %q; want exit 1 and the interruption reported", code, stderr)
	}
	r := sweepLoadRun(t, filepath.Join(dir, "cut"))
	if stepLabels(r) != "c=2#0" || r.Sweep.Stop == nil || r.Sweep.Stop.Rule != sweep.RuleInterrupted || r.Steps[0].Requests == 0 {
		t.Fatalf("run.json after Ctrl-C: steps %s, stop %+v; want the partial c=2 step kept", stepLabels(r), r.Sweep.Stop)
	}
	// The load stops at the cancel (after 20 responses, about 60ms), not at the end of the
	// 20s level (10s: room for a busy machine with -race).
	if el := r.Steps[0].Elapsed.Duration(); el > 10*time.Second {
		t.Errorf("interrupted step measured for %v; want it cut soon after the cancel", el)
	}
	if w := strings.Join(r.AllWarnings(), "\n"); !strings.Contains(w, "interrupted: measured") {
		t.Errorf("warnings %q; want the partial step flagged", w)
	}
	if _, err := os.Stat(filepath.Join(dir, "cut", report.HTMLFile)); err != nil || !strings.Contains(stdout, "report: ") {
		t.Errorf("interrupted sweep: report.html %v, stdout %q; want it rendered", err, stdout)
	}
}

func TestSweepVsNative(t *testing.T) {
	t.Setenv(sweepServeEnv, "1")
	url := sweepServer(t, http.StatusOK)
	dir := t.TempDir()
	code, stdout, stderr := sweepCLI(context.Background(), "--levels", "2,4", "-d", "300ms", "--warmup", "0", "--name", "native", "--dir", dir, "--vs-native", "--no-report", url)
	if code != ExitOK {
		t.Fatalf("apiperf sweep --vs-native = exit %d, stderr %q", code, stderr)
	}
	r := sweepLoadRun(t, filepath.Join(dir, "native"))
	n := r.Native
	if n == nil || stepLabels(n) != "c=2#0 c=4#0" || n.Sweep == nil || !strings.HasSuffix(n.Scenario.URL, "/healthz") || n.Scenario.URL == r.Scenario.URL {
		t.Fatalf("run.json native = %+v; want the same two levels against the built-in /healthz", n)
	}
	c := r.Sweep.VsNative
	if c == nil || c.Ratio <= 0 || c.NativeQPS <= 0 {
		t.Fatalf("vs_native = %+v; want a positive ratio", c)
	}
	if !strings.Contains(stdout, c.String()) || !strings.Contains(stdout, "% of plain net/http") {
		t.Errorf("stdout %q lacks the headline %q", stdout, c)
	}
}

func TestSweepFileLimit(t *testing.T) {
	soft, _, err := load.RaiseFileLimit()
	if err != nil || soft > 1<<20 {
		t.Skipf("open-file limit %d (%v): too high to exceed with a safe test", soft, err)
	}
	huge := fmt.Sprint(soft + 1)
	url := sweepServer(t, http.StatusOK)
	dir := t.TempDir()
	// A later level over the limit stops the sweep before any of its connections is opened.
	code, _, stderr := sweepCLI(context.Background(), "--levels", "2,"+huge, "-d", "200ms", "--warmup", "0", "--name", "fl", "--dir", dir, "--no-report", url)
	if code != ExitOK || !strings.Contains(stderr, "stopped: before c="+huge+": cannot open "+huge+" connections: the open-file limit is") {
		t.Errorf("sweep to c=%s = exit %d, stderr %q; want exit 0 and the file-limit stop with the limit", huge, code, stderr)
	}
	r := sweepLoadRun(t, filepath.Join(dir, "fl"))
	if stepLabels(r) != "c=2#0" || r.Sweep.Stop == nil || r.Sweep.Stop.Rule != sweep.RuleFileLimit {
		t.Errorf("run.json: steps %s stop %+v; want c=2 then the file-limit stop", stepLabels(r), r.Sweep.Stop)
	}
	// A first level over the limit is bad input: nothing could be measured.
	code, _, stderr = sweepCLI(context.Background(), "--levels", huge, "--dir", dir, url)
	if code != ExitUsage || !strings.Contains(stderr, "cannot open "+huge+" connections") {
		t.Errorf("sweep starting at c=%s = exit %d, stderr %q; want exit 2 naming the limit", huge, code, stderr)
	}
}

func TestSweepProgress(t *testing.T) {
	url := sweepServer(t, http.StatusOK)
	var stdout, stderr bytes.Buffer
	e := &env{stdout: &stdout, stderr: &stderr, isTerminal: true}
	err := cmdSweep(context.Background(), e, []string{"--levels", "2", "-d", "1300ms", "--warmup", "0", "--dir", t.TempDir(), "--no-report", url})
	if err != nil {
		t.Fatalf("sweep on a terminal: %v", err)
	}
	// The live view (live.Session), drawn on stderr and erased after the level.
	if !regexp.MustCompile(`\r\033\[K  [0-9]+s elapsed, ETA [0-9]+s  ·  level 1 of 1  ·  c=2\n\r\033\[K  req/s +[0-9.]+[kM]? `).MatchString(stderr.String()) {
		t.Errorf("stderr %q: want the live view naming the level", stderr.String())
	}
}

// TestSweepCountSameEverywhere: `sweep --count 3` prints, for each level, the same QPS and p99
// in the terminal table, the .dat file, report.html and run.json (one reduction of the
// repetitions, sweep.Reduce).
func TestSweepCountSameEverywhere(t *testing.T) {
	url := sweepServer(t, 200)
	dir := t.TempDir()
	code, stdout, stderr := sweepCLI(context.Background(), "--no-history", "--levels", "2,4", "-d", "300ms", "--warmup", "0", "--count", "3",
		"--name", "reps", "--dir", dir, url)
	if code != ExitOK {
		t.Fatalf("sweep --count 3 = exit %d, stderr %q", code, stderr)
	}
	run := filepath.Join(dir, "reps")
	r := sweepLoadRun(t, run)
	dat, err := os.ReadFile(filepath.Join(run, "reps.dat"))
	if err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(filepath.Join(run, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Sweep.Levels) != 2 {
		t.Fatalf("run.json levels = %+v; want 2", r.Sweep.Levels)
	}
	for _, l := range r.Sweep.Levels {
		p99 := report.FormatDuration(l.P99.Duration())
		if l.Reps != 3 {
			t.Errorf("%s: %d repetitions; want 3", l.Label, l.Reps)
		}
		if row := fmt.Sprintf("%-14s %10.1f", l.Label, l.QPS); !strings.Contains(stdout, row) || !strings.Contains(stdout, p99) {
			t.Errorf("table lacks %s's QPS %q or p99 %s:\n%s", l.Label, row, p99, stdout)
		}
		if line := fmt.Sprintf("%s %.2f ", sweep.FormatValue(l.Value), l.QPS); !strings.Contains(string(dat), line) {
			t.Errorf(".dat lacks %q:\n%s", line, dat)
		}
		if cell := fmt.Sprintf("<td>%s</td><td>3</td><td>%.2f</td>", l.Label, l.QPS); !strings.Contains(string(html), cell) || !strings.Contains(string(html), "<td>"+p99+"</td>") {
			t.Errorf("report.html lacks %s's row %q with p99 %s", l.Label, cell, p99)
		}
	}
}

// Two sweeps of one target in a row (README's --levels then --rates examples) each get their
// own run directory, named for the target, then -2: the second never replaces the first's
// report, and its "report:" line names its own. A --name given twice replaces, and says so.
func TestSweepRunDirPerRun(t *testing.T) {
	url := sweepServer(t, http.StatusOK)
	dir := t.TempDir()
	reportLine := regexp.MustCompile(`(?m)^report: (.*)/report\.html$`)
	var runs []string
	for _, plan := range [][]string{{"--levels", "2"}, {"--rates", "50"}} {
		code, stdout, stderr := sweepCLI(context.Background(), append(plan, "-d", "200ms", "--warmup", "0", "--dir", dir, url)...)
		m := reportLine.FindStringSubmatch(stdout)
		if code != ExitOK || m == nil {
			t.Fatalf("apiperf sweep %v = exit %d, stdout %q, stderr %q; want 0 and a report line", plan, code, stdout, stderr)
		}
		runs = append(runs, m[1])
	}
	if runs[0] == runs[1] || filepath.Base(runs[1]) != filepath.Base(runs[0])+"-2" {
		t.Fatalf("run directories %q; want two, the second the first's name with -2", runs)
	}
	for i, want := range []string{"c=2#0", "rate=50/s#0"} {
		if got := stepLabels(sweepLoadRun(t, runs[i])); got != want {
			t.Errorf("%s/run.json steps %s; want %s (each run kept its own)", runs[i], got, want)
		}
		if _, err := os.Stat(filepath.Join(runs[i], "report.html")); err != nil {
			t.Errorf("%s: %v", runs[i], err)
		}
	}
	for i := range 2 {
		code, _, stderr := sweepCLI(context.Background(), "--levels", "2", "-d", "100ms", "--warmup", "0", "--name", "mine", "--dir", dir, "--no-report", url)
		if noted := strings.Contains(stderr, "replacing the earlier run in "+filepath.Join(dir, "mine")); code != ExitOK || noted != (i == 1) {
			t.Errorf("sweep --name mine, run %d = exit %d, stderr %q; want 0, a note that it replaces the earlier run only the second time", i+1, code, stderr)
		}
	}
}
