package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/profcap"
	"github.com/apiperf/apiperf/report"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/scenario"
	"github.com/apiperf/apiperf/store"
)

// newcomerCLI runs apiperf in-process and returns the exit code, stdout and stderr.
func newcomerCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestVersionFromBuildInfo(t *testing.T) {
	code, out, _ := newcomerCLI(t, "--version")
	if code != ExitOK || !strings.HasPrefix(out, "apiperf ") || strings.Contains(out, "apiperf dev") {
		t.Errorf("apiperf --version: exit %d, %q; want the build's version, not dev", code, out)
	}
	for _, tc := range []struct {
		bi   debug.BuildInfo
		want string
	}{
		// go install github.com/apiperf/apiperf/cmd/apiperf@v1.2.0
		{debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.0"}}, "v1.2.0, go1.26.8"},
		// go build in a checkout: Go stamps a pseudo-version that already names the commit
		{debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261123053000-a418164aaaaa+dirty"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "a418164aaaaabbbbccccdddd"}, {Key: "vcs.modified", Value: "true"}}},
			"v0.0.0-20261123053000-a418164aaaaa+dirty, go1.26.8"},
		// go build with an older toolchain or -buildvcs on a local tree: (devel) plus the revision
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "a418164aaaaabbbbccccdddd"}, {Key: "vcs.time", Value: "2026-11-23T05:30:00Z"}, {Key: "vcs.modified", Value: "true"}}},
			"(devel), rev a418164aaaaa+modified 2026-11-23T05:30:00Z"},
	} {
		if got := buildVersion(&tc.bi); got != tc.want {
			t.Errorf("buildVersion(%+v) = %q; want %q", tc.bi.Main, got, tc.want)
		}
	}
}

func TestURLWithoutSchemeSuggestsHTTP(t *testing.T) {
	code, _, stderr := newcomerCLI(t, "run", "-d", "1s", "127.0.0.1:8080/x")
	want := "apiperf: URL \"127.0.0.1:8080/x\" has no scheme: did you mean http://127.0.0.1:8080/x ?\n"
	if code != ExitUsage || stderr != want {
		t.Errorf("apiperf run 127.0.0.1:8080/x: exit %d, stderr %q; want exit 2 and %q", code, stderr, want)
	}
}

func TestThreadsClampedIsSaid(t *testing.T) {
	url := sweepServer(t, 200)
	code, _, stderr := newcomerCLI(t, "run", "--no-history", "-c3", "-t4", "-n", "30", url)
	if code != ExitOK || !strings.Contains(stderr, "apiperf: note: running 3 threads, not 4: each thread needs at least one of the 3 connections") {
		t.Errorf("apiperf run -c3 -t4: exit %d, stderr %q; want a note that 3 threads run", code, stderr)
	}
	// Nothing is said when the user did not ask for a thread count.
	if _, _, stderr := newcomerCLI(t, "run", "--no-history", "-c1", "-n", "10", url); strings.Contains(stderr, "note:") {
		t.Errorf("apiperf run -c1 (default threads): stderr %q; want no note", stderr)
	}
}

// historyRun is a recorded run of url with labels: five repetitions of c=10 at about
// 1000 req/s whose latencies are base plus a little noise.
func historyRun(url string, start time.Time, labels map[string]string, base time.Duration) *result.Run {
	r := &result.Run{Version: result.Version, Tool: "apiperf test", Kind: result.KindRun, Host: "h",
		Command: []string{"apiperf", "run", url}, Labels: labels, Scenario: scenario.Scenario{URL: url},
		Load: load.Config{Connections: 10, Threads: 1, Duration: measure.Duration(time.Second)}, Start: start, End: start.Add(5 * time.Second)}
	for i := range 5 {
		h := measure.NewHistogram()
		h.RecordN(base+time.Duration(i)*10*time.Microsecond, 1000)
		r.Steps = append(r.Steps, &measure.Step{Label: "c=10", Rep: i, Concurrency: 10, Elapsed: measure.Duration(time.Second),
			Attempts: 1000, Requests: 1000, Successes: 1000, Latency: h, AllAttempts: h})
	}
	return r
}

// TestGateBaselineTwoURLs: the history holds runs against two URLs, all labelled branch=main by
// git. The gate's baseline "label=branch:main" is the newest run of the current run's URL and
// shape, not the newest run; an id of the other URL's run is refused without --allow-mismatch.
func TestGateBaselineTwoURLs(t *testing.T) {
	db := filepath.Join(t.TempDir(), "history.db")
	h, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	const a, b = "http://127.0.0.1:8080/api", "http://127.0.0.1:8081/api"
	main := map[string]string{"branch": "main"}
	for _, r := range []*result.Run{
		historyRun(a, t0, main, time.Millisecond),                                                    // #1: the baseline of a
		historyRun(b, t0.Add(time.Hour), main, 5*time.Millisecond),                                   // #2: newer, slower, another URL
		historyRun(a, t0.Add(2*time.Hour), map[string]string{"branch": "feature"}, time.Millisecond), // #3: current
	} {
		if _, _, err := h.Record(context.Background(), r, ""); err != nil {
			t.Fatal(err)
		}
	}
	h.Close()

	code, stdout, stderr := newcomerCLI(t, "gate", "--db", db, "--baseline", "label=branch:main", "--current", "3")
	if code != ExitOK || !strings.Contains(stdout, "gate: PASS against label=branch:main (run #1)") {
		t.Errorf("gate --baseline label=branch:main --current 3: exit %d, stdout %q, stderr %q; want PASS against run #1", code, stdout, stderr)
	}
	code, stdout, stderr = newcomerCLI(t, "gate", "--db", db, "--baseline", "2", "--current", "3")
	if code != ExitUsage || !strings.Contains(stderr, "URL http://127.0.0.1:8081/api, not http://127.0.0.1:8080/api; pass --allow-mismatch") {
		t.Errorf("gate --baseline 2 (another URL): exit %d, stdout %q, stderr %q; want exit 2 naming both URLs", code, stdout, stderr)
	}
	code, stdout, stderr = newcomerCLI(t, "gate", "--db", db, "--baseline", "2", "--current", "3", "--allow-mismatch")
	if code != ExitOK || !strings.Contains(stderr, "warning: comparing different experiments (--allow-mismatch): URL http://127.0.0.1:8081/api") ||
		!strings.Contains(stdout, "gate: PASS against run #2") {
		t.Errorf("gate --baseline 2 --allow-mismatch: exit %d, stdout %q, stderr %q; want a warning and PASS against run #2", code, stdout, stderr)
	}
}

// TestTwoDiffsKeepTheirFiles: two diffs into one directory write two pages, not one
// diff.html that the second replaces.
func TestTwoDiffsKeepTheirFiles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a", "b", "c"} {
		data := "10 1000.00 1.00 100.00\n20 1500.00 1.50 100.00\n"
		if err := os.WriteFile(filepath.Join(dir, name+".dat"), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "out")
	for _, pair := range [][2]string{{"a", "b"}, {"a", "c"}} {
		code, _, stderr := newcomerCLI(t, "diff", "--dir", out, filepath.Join(dir, pair[0]+".dat"), filepath.Join(dir, pair[1]+".dat"))
		page := filepath.Join(out, pair[0]+"_"+pair[1]+".diff.html")
		if code != ExitOK || !strings.Contains(stderr, "open "+page) {
			t.Fatalf("apiperf diff %s %s: exit %d, stderr %q; want it to name %s", pair[0], pair[1], code, stderr, page)
		}
	}
	for _, f := range []string{"a_b.diff.html", "a_c.diff.html", "a_b.qps.ttlb.diff.svg", "a_c.qps.ttlb.diff.svg"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("after two diffs: %v; want both diffs' files", err)
		}
	}
}

// TestHistoryTrendPerTarget: a history of runs against two URLs gives one chart per URL, written
// into the output directory (not the working directory).
func TestHistoryTrendPerTarget(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "history.db")
	h, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for i := range 4 {
		url := []string{"http://127.0.0.1:8080/api", "http://127.0.0.1:8081/api"}[i%2]
		if _, _, err := h.Record(context.Background(), historyRun(url, t0.Add(time.Duration(i)*time.Hour), nil, time.Millisecond), ""); err != nil {
			t.Fatal(err)
		}
	}
	h.Close()
	out := filepath.Join(dir, "out")
	code, stdout, stderr := newcomerCLI(t, "history", "trend", "--db", db, "--metric", "p99", "--dir", out)
	page := filepath.Join(out, "trend-p99.html")
	// One short line whatever the number of targets, not every chart's path.
	if want := "p99 of 2 targets over 4 runs: open " + page + " (4 charts beside it, trend-p99-<target>.svg and .png)\n"; code != ExitOK || stdout != want {
		t.Fatalf("history trend: exit %d, stdout %q, stderr %q; want %q", code, stdout, stderr, want)
	}
	for _, f := range []string{"trend-p99-run_GET_http-127.0.0.1_8080_api.svg", "trend-p99-run_GET_http-127.0.0.1_8081_api.png"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("history trend did not write %s: %v", f, err)
		}
	}
	// A filter picks one target: one chart, named without the target.
	code, stdout, _ = newcomerCLI(t, "history", "trend", "--db", db, "--metric", "qps", "--dir", out, "--url", "http://127.0.0.1:8081/api")
	if _, err := os.Stat(filepath.Join(out, "trend-qps.svg")); code != ExitOK || err != nil || !strings.HasPrefix(stdout, "qps of 1 target over 2 runs: open "+filepath.Join(out, "trend-qps.html")+" (charts: "+filepath.Join(out, "trend-qps.svg")) {
		t.Errorf("history trend --url: exit %d, stdout %q, %v; want one target, 2 runs, trend-qps.svg", code, stdout, err)
	}
}

// TestHelpExamplesParse: every command's --help ends with examples, and every example's
// flags parse (the example with --help appended stops after parsing every flag before it).
func TestHelpExamplesParse(t *testing.T) {
	for _, c := range commands() {
		if len(examples[c.name]) < 2 {
			t.Errorf("apiperf %s --help has %d examples; want 2 or 3", c.name, len(examples[c.name]))
		}
	}
	if code, out, _ := newcomerCLI(t, "help"); code != ExitOK || !strings.Contains(out, "Examples:\n  # first steps") {
		t.Errorf("apiperf help: exit %d, %q; want the first steps among its examples", code, out)
	}
	for name, ex := range examples {
		for _, l := range ex {
			cmd, _, _ := strings.Cut(l, "  # ")
			words := shellWords(cmd)
			cmdName := name
			if name == "apiperf" && len(words) > 1 {
				cmdName = words[1] // the overview's examples span commands
			}
			if len(words) < 2 || words[0] != "apiperf" || !strings.HasPrefix(strings.Join(words[1:], " "), cmdName) {
				t.Errorf("example %q of %s: want apiperf %s ...", l, name, cmdName)
				continue
			}
			code, stdout, stderr := newcomerCLI(t, append(words[1:], "--help")...)
			if code != ExitOK || !strings.Contains(stdout, "Examples:\n  # ") || stderr != "" {
				t.Errorf("apiperf %s --help: exit %d, stdout ends %q, stderr %q; want the usage with examples on stdout and no error",
					strings.Join(words[1:], " "), code, stdout[max(0, len(stdout)-300):], stderr)
			}
		}
	}
}

// shellWords splits a command line as a shell would, for the quoting examples use ('...').
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	in, quoted := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted, in = !quoted, true
		case r == ' ' && !quoted:
			if in {
				words = append(words, cur.String())
				cur.Reset()
			}
			in = false
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// TestWrkHeaderInOnePiece: on a terminal stdout and stderr interleave; apiperf's own line
// comes before wrk's header, not between its lines.
func TestWrkHeaderInOnePiece(t *testing.T) {
	url := sweepServer(t, 200)
	var both bytes.Buffer
	code := Run(context.Background(), []string{"run", "--no-history", "-c2", "-t1", "-d", "200ms", url}, &both, &both)
	out := both.String()
	if code != ExitOK || !regexp.MustCompile(`^apiperf: [^\n]*\nRunning [^\n]+ test @ [^\n]+\n  1 threads and 2 connections\n`).MatchString(out) {
		t.Errorf("apiperf run (stdout and stderr together): exit %d, output starts %q; want apiperf's line, then wrk's header in one piece", code, out[:min(len(out), 300)])
	}
}

// TestProfilePathsFromWorkingDirectory: the profile paths printed after a sweep or run are
// where the files are from the working directory, ready for go tool pprof.
func TestProfilePathsFromWorkingDirectory(t *testing.T) {
	tc := &profcap.Record{Steps: []profcap.StepRecord{{Label: "c=20", Files: []string{"profiles/c=20/cpu.pb.gz", "profiles/c=20/heap.pb.gz"}}}}
	for _, tt := range []struct{ dir, want string }{
		{"apiperf-out/127.0.0.1-8080", "Profiles: apiperf-out/127.0.0.1-8080/profiles/c=20/cpu.pb.gz apiperf-out/127.0.0.1-8080/profiles/c=20/heap.pb.gz (open with go tool pprof)\n"},
		{".", "Profiles: profiles/c=20/cpu.pb.gz profiles/c=20/heap.pb.gz (open with go tool pprof)\n"}, // run without -o
	} {
		var b bytes.Buffer
		report.TargetText(&b, tc, 10, tt.dir)
		if b.String() != tt.want {
			t.Errorf("report.TargetText(dir %q) = %q; want %q", tt.dir, b.String(), tt.want)
		}
	}
}

// rawFloat finds a number printed with more digits than any figure apiperf shows deserves
// (93.80000000000001, 1.6099999999999999s): Go's shortest float formatting leaking out.
var rawFloat = regexp.MustCompile(`[0-9]\.[0-9]{7,}`)

// TestNoRawFloats runs run, sweep and capacity against a loopback server with figures that
// tempt raw float formatting (a rate of 93.8/s) and checks everything a person reads:
// stdout, stderr and the text files written (.dat, bench.txt, report.html without its
// embedded charts).
func TestNoRawFloats(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a loopback server for about 4 s")
	}
	url := sweepServer(t, 200)
	var mu sync.Mutex
	var last time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		now := time.Now()
		tooSoon := now.Sub(last) < 4*time.Millisecond
		last = now
		mu.Unlock()
		if tooSoon {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	choosy := srv.URL + "/api"
	dir := t.TempDir()
	check := func(what, text string) {
		t.Helper()
		text = regexp.MustCompile(`data:image/[^"]+`).ReplaceAllString(text, "")
		if m := rawFloat.FindAllString(text, 5); len(m) > 0 {
			i := strings.Index(text, m[0])
			t.Errorf("%s prints raw floats %q, e.g. in %q", what, m, text[max(0, i-60):min(len(text), i+40)])
		}
	}
	for _, args := range [][]string{
		{"run", "--no-history", "-R", "93.8", "-d", "600ms", "--latency", url},
		{"run", "--no-history", "-c2", "-t1", "-d", "300ms", "--count", "2", url},
		{"sweep", "--no-history", "--rates", "93.8,187.6", "-d", "400ms", "--warmup", "0s", "--dir", dir, "--name", "rates", url},
		{"capacity", "--no-history", "--start", "93.8", "-d", "300ms", "--warmup", "0s", "--max-probes", "3", "--dir", dir, "--name", "cap", url},
		// fails above about 250 req/s: 70.7, 141.4, 282.8 (fails), then bisection rates
		{"capacity", "--no-history", "--start", "70.7", "-d", "300ms", "--warmup", "0s", "--max-probes", "5", "--dir", dir, "--name", "bisect", choosy},
	} {
		code, stdout, stderr := newcomerCLI(t, args...)
		if code != ExitOK && code != ExitFailed {
			t.Errorf("apiperf %s: exit %d, stderr %q", strings.Join(args, " "), code, stderr)
		}
		check("apiperf "+strings.Join(args, " ")+" (stdout)", stdout)
		check("apiperf "+strings.Join(args, " ")+" (stderr)", stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*"))
	for _, f := range files {
		if ext := filepath.Ext(f); ext == ".dat" || ext == ".txt" || ext == ".html" {
			b, _ := os.ReadFile(f)
			check(f, string(b))
		}
	}
}

// A bare number of seconds is that many seconds: -d 1.61 prints as 1.61s, not 1.609999999s.
func TestBareSecondsPrintClean(t *testing.T) {
	for _, tc := range []struct{ in, want string }{{"1.61", "1.61s"}, {"0.3", "300ms"}, {"2.2", "2.2s"}, {"0.0015", "1.5ms"}} {
		d, err := parseDuration(tc.in)
		if err != nil || d.String() != tc.want {
			t.Errorf("parseDuration(%q) = %v, %v; want %s", tc.in, d, err, tc.want)
		}
	}
}

// capacity --help says the probe duration it uses: -d defaults to 5s there, not run's 10s.
func TestCapacityHelpProbeDuration(t *testing.T) {
	_, stdout, _ := newcomerCLI(t, "capacity", "--help")
	if !regexp.MustCompile(`-d, --duration duration +duration of each probe[^\n]*\(default 5s\)\n`).MatchString(stdout) {
		t.Errorf("capacity --help: the -d line does not say each probe lasts 5s by default:\n%s", stdout)
	}
}

// Every command's --help, and `apiperf help CMD`, is data: on stdout with exit 0 and
// nothing on stderr, so `apiperf run --help | grep trace` finds the flag.
func TestHelpOnStdout(t *testing.T) {
	for _, c := range commands() {
		for _, args := range [][]string{{c.name, "--help"}, {c.name, "-h"}, {"help", c.name}} {
			code, stdout, stderr := newcomerCLI(t, args...)
			if code != ExitOK || !strings.Contains(stdout, "Usage") || !strings.Contains(stdout, "Examples:") || stderr != "" {
				t.Errorf("apiperf %s: exit %d, stdout %.80q, stderr %q; want exit 0, the usage on stdout, stderr empty",
					strings.Join(args, " "), code, stdout, stderr)
			}
		}
	}
	if _, stdout, _ := newcomerCLI(t, "run", "--help"); !strings.Contains(stdout, "--trace-seconds") {
		t.Errorf("apiperf run --help | grep trace finds nothing:\n%s", stdout)
	}
}

// TestDiffNotesAnotherExperiment: diff compares runs of two URLs (that is often the point) but
// says so; runs of one URL get no note.
func TestDiffNotesAnotherExperiment(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	save := func(name, url string, at time.Time) string {
		p := filepath.Join(dir, name, "run.json")
		if err := historyRun(url, at, nil, time.Millisecond).Save(p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := save("a", "http://127.0.0.1:8080/api", t0)
	b := save("b", "http://127.0.0.1:8081/api", t0.Add(time.Hour))
	a2 := save("a2", "http://127.0.0.1:8080/api", t0.Add(2*time.Hour))
	_, _, stderr := newcomerCLI(t, "diff", "--dir", filepath.Join(dir, "out"), a, b)
	if !strings.Contains(stderr, "apiperf: note: B is another experiment than A: URL http://127.0.0.1:8081/api, not http://127.0.0.1:8080/api\n") {
		t.Errorf("diff of two URLs: stderr %q; want a note naming both", stderr)
	}
	// diff.html says it too, beside the headline.
	pages, _ := filepath.Glob(filepath.Join(dir, "out", "*.diff.html"))
	if len(pages) != 1 {
		t.Fatalf("diff wrote %v; want one diff.html", pages)
	}
	if page, _ := os.ReadFile(pages[0]); !strings.Contains(string(page), `<p class="note">B is another experiment than A: URL http://127.0.0.1:8081/api, not http://127.0.0.1:8080/api</p>`) {
		t.Errorf("%s does not say that B measured another URL", pages[0])
	}
	if _, _, stderr := newcomerCLI(t, "diff", "--dir", filepath.Join(dir, "out"), a, a2); strings.Contains(stderr, "note:") {
		t.Errorf("diff of one URL twice: stderr %q; want no note", stderr)
	}
}
