package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/profcap"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/target"
)

// asApiperfEnv makes this test binary act as `apiperf` (see TestMain), so target.Spawn can
// run `apiperf serve` as a real child process without building the binary.
const asApiperfEnv = "APIPERF_CLI_TEST_AS_APIPERF"

func TestMain(m *testing.M) {
	if os.Getenv(asApiperfEnv) == "1" && len(os.Args) > 1 && slices.Contains([]string{"serve", "worker", "run", "sweep", "capacity", "history"}, os.Args[1]) {
		ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
		defer cancel()
		os.Exit(Run(ctx, os.Args[1:], os.Stdout, os.Stderr))
	}
	// Tests never record into a history database in the source tree.
	if os.Getenv("APIPERF_DB") == "" {
		dir, err := os.MkdirTemp("", "apiperf-cli-test")
		if err != nil {
			panic(err)
		}
		os.Setenv("APIPERF_DB", dir+"/history.db")
		code := m.Run()
		os.RemoveAll(dir)
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// spawnServe starts `apiperf serve args...` as a child process and returns its URL.
func spawnServe(t *testing.T, args ...string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(asApiperfEnv, "1")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	p, err := target.Spawn(ctx, exe, args...)
	if err != nil {
		cancel()
		t.Fatalf("spawning apiperf serve %v: %v", args, err)
	}
	t.Cleanup(func() {
		p.Stop()
		cancel()
	})
	return p.URL()
}

func entryIn(entries []profcap.TopEntry, suffix string) (profcap.TopEntry, bool) {
	i := slices.IndexFunc(entries, func(e profcap.TopEntry) bool { return strings.HasSuffix(e.Function, suffix) })
	if i < 0 {
		return profcap.TopEntry{}, false
	}
	return entries[i], true
}

// TestRunPprofHotAndAlloc is the end-to-end check: `apiperf run --pprof --metrics`
// against `apiperf serve` finds the hot handler in the CPU profile and the allocating
// handler in the heap profile, and go tool pprof opens the saved files.
func TestRunPprofHotAndAlloc(t *testing.T) {
	url := spawnServe(t, "--pprof", "--metrics")
	dir := t.TempDir()
	out := filepath.Join(dir, "hot", "run.json")
	code, stdout, stderr := runCLI(t, "run", "-c", "4", "-t", "2", "-d", "2s", "-o", out,
		"--pprof", url+"/debug/pprof", "--metrics", url+"/metrics", url+"/hot")
	if code != ExitOK {
		t.Fatalf("apiperf run /hot: exit %d, stderr:\n%s", code, stderr)
	}
	doc, err := result.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	ts := doc.Target.Step("c=4", 0)
	if ts == nil || ts.Profiles == nil || ts.Profiles.CPU == nil {
		t.Fatalf("run.json target capture = %+v, want a CPU profile for c=4; stderr:\n%s", doc.Target, stderr)
	}
	const hot = "target.apiperfHotHandlerSpin"
	// net/http's own frames (conn.serve, ServeMux...) sit above the handler by cum.
	if e, ok := entryIn(ts.Profiles.CPU.ByCum[:min(10, len(ts.Profiles.CPU.ByCum))], hot); !ok || e.CumPct < 20 {
		t.Errorf("top 10 cumulative entries lack %s with >= 20%% (got %+v):\n%s", hot, e, ts.Profiles.CPU)
	}
	if flat := ts.Profiles.CPU.ByFlat; len(flat) == 0 || !strings.HasSuffix(flat[0].Function, hot) {
		t.Errorf("top flat entry is %v, want %s", flat[:min(1, len(flat))], hot)
	}
	if !strings.Contains(stdout, "top -cum") || !strings.Contains(stdout, "apiperfHotHandlerSpin") {
		t.Errorf("stdout lacks the top -cum table with the hot function:\n%s", stdout)
	}
	if ts.CPUSeconds != 1 || ts.CPUFrom <= 0 || ts.CPUFrom+time.Duration(ts.CPUSeconds)*time.Second > 2*time.Second {
		t.Errorf("CPU profile placed at %v for %ds, want 1s inside the 2s window after a settle", ts.CPUFrom, ts.CPUSeconds)
	}
	if el := doc.Steps[0].Elapsed.Duration(); el < 1900*time.Millisecond || el > 3*time.Second {
		t.Errorf("the measured window lasted %v with capture on, want about 2s", el)
	}
	if ts.Summary == nil || ts.Summary.Points < 2 || ts.Summary.CPUCores == nil || ts.Summary.CPUCores.Max <= 0 {
		t.Errorf("metrics summary = %+v, want >= 2 points and a busy target CPU", ts.Summary)
	}
	if len(ts.Files) != 4 || ts.Trace == nil || !strings.HasSuffix(ts.Files[3], "trace.out") {
		t.Fatalf("saved profiles %q (trace %+v), want cpu, heap, goroutine and the trace after the CPU profile", ts.Files, ts.Trace)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not on PATH")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	top, err := exec.CommandContext(ctx, goTool, "tool", "pprof", "-top", "-symbolize=none", filepath.Join(dir, "hot", ts.Files[0])).CombinedOutput()
	if err != nil || !strings.Contains(string(top), "apiperfHotHandlerSpin") {
		t.Errorf("go tool pprof -top %s: err %v, output lacks the hot function:\n%s", ts.Files[0], err, top)
	}

	// A 1s window fits no CPU profile: a note, and the heap snapshot still comes.
	out = filepath.Join(dir, "alloc", "run.json")
	code, _, stderr = runCLI(t, "run", "-c", "4", "-t", "2", "-d", "1s", "-o", out, "-q", "--pprof", url+"/debug/pprof", url+"/alloc")
	if code != ExitOK {
		t.Fatalf("apiperf run /alloc: exit %d, stderr:\n%s", code, stderr)
	}
	if doc, err = result.Load(out); err != nil {
		t.Fatal(err)
	}
	ts = doc.Target.Step("c=4", 0)
	if ts == nil || ts.Profiles == nil || ts.Profiles.AllocSpace == nil {
		t.Fatalf("run.json target capture = %+v, want a heap profile", doc.Target)
	}
	const garbage = "target.apiperfAllocHandlerGarbage"
	if e, ok := entryIn(ts.Profiles.AllocSpace.ByFlat, garbage); !ok || e.FlatPct < 10 {
		t.Errorf("alloc_space sites lack %s with >= 10%% (got %+v):\n%s", garbage, e, ts.Profiles.AllocSpace)
	}
	if ts.Profiles.CPU != nil || !slices.ContainsFunc(ts.Warnings, func(w string) bool { return strings.Contains(w, "no 1s profile fits") }) {
		t.Errorf("a 1s run: CPU %v, warnings %q; want no CPU profile and a note", ts.Profiles.CPU, ts.Warnings)
	}
}

// TestSweepMetricsAndProfileLevels runs `apiperf sweep --levels 5,50 --metrics --pprof
// --profile-levels last`: the scraped goroutine count rises with concurrency, and only
// the last level keeps its profiles.
func TestSweepMetricsAndProfileLevels(t *testing.T) {
	url := spawnServe(t, "--pprof", "--metrics", "--delay", "2ms")
	dir := t.TempDir()
	code, stdout, stderr := runCLI(t, "sweep", "--levels", "5,50", "-d", "1500ms", "--warmup", "0", "--no-stop", "-t", "2",
		"--dir", dir, "--name", "s", "-q", "--metrics", url+"/metrics", "--pprof", url+"/debug/pprof", "--profile-levels", "last", url+"/healthz")
	if code != ExitOK {
		t.Fatalf("apiperf sweep: exit %d, stderr:\n%s", code, stderr)
	}
	doc, err := result.Load(filepath.Join(dir, "s", "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := doc.Target.Step("c=5", 0), doc.Target.Step("c=50", 0)
	if lo == nil || hi == nil || lo.Summary == nil || hi.Summary == nil || lo.Summary.Goroutines == nil || hi.Summary.Goroutines == nil {
		t.Fatalf("target capture %+v lacks goroutine summaries for c=5 and c=50", doc.Target)
	}
	if l, h := lo.Summary.Goroutines.Max, hi.Summary.Goroutines.Max; h < l+30 {
		t.Errorf("goroutines at c=5: max %.0f, at c=50: max %.0f; want at least 30 more at c=50", l, h)
	}
	if lo.Profiles != nil || len(lo.Files) > 0 || hi.Profiles == nil || len(hi.Files) != 3 {
		t.Errorf("profiles kept: c=5 %v %q, c=50 %v %q; want only c=50's", lo.Profiles != nil, lo.Files, hi.Profiles != nil, hi.Files)
	}
	for _, f := range hi.Files {
		if _, err := os.Stat(filepath.Join(dir, "s", f)); err != nil {
			t.Errorf("saved profile %s: %v", f, err)
		}
	}
	if !strings.Contains(stdout, "Target CPU profile at c=50") {
		t.Errorf("stdout lacks the c=50 top table:\n%s", stdout)
	}
	if doc.Native != nil {
		t.Errorf("no --vs-native, yet a native run was recorded")
	}
}

// TestCaptureFailuresKeepTheLoad: every broken pprof or metrics endpoint gives a warning
// and a complete load result.
func TestCaptureFailuresKeepTheLoad(t *testing.T) {
	var heap bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&heap, 0); err != nil {
		t.Fatal(err)
	}
	truncated := heap.Bytes()[:heap.Len()/2]
	tests := []struct {
		name     string
		handler  http.HandlerFunc // serves /debug/pprof/ and /metrics
		args     []string
		want     string // in one of the run's warnings
		maxWait  time.Duration
		pprofOff bool
	}{
		// no pprof mounted at all: every profile is a 404.
		{name: "missing", handler: http.NotFound, want: "captured 0 of 3 profiles: cpu: 404 Not Found"},
		// a login page instead of pprof.
		{name: "html", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("<!DOCTYPE html><html><title>Sign in</title></html>"))
		}, want: "got an HTML page, not a profile"},
		// a profile cut in the middle.
		{name: "truncated", handler: func(w http.ResponseWriter, r *http.Request) { w.Write(truncated) }, want: "parsing profile"},
		// an endpoint that never answers: abandoned after the fetch deadline.
		{name: "slow", handler: func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(30 * time.Second):
			}
		}, want: "context deadline exceeded", maxWait: 25 * time.Second}, // under its 30 s: abandoned, not waited for
		// a metrics endpoint that answers garbage.
		{name: "metrics garbage", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("\x00\x01 not metrics {{{\n"))
		}, pprofOff: true, want: "failed; last: parsing metrics"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			mux := http.NewServeMux()
			mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
			mux.HandleFunc("/debug/pprof/", tt.handler)
			mux.HandleFunc("/metrics", tt.handler)
			srv := httptest.NewServer(mux)
			defer srv.Close()
			defer srv.CloseClientConnections()
			out := filepath.Join(t.TempDir(), "run.json")
			args := []string{"run", "-c", "2", "-t", "1", "-d", "1500ms", "-o", out, "-q", "--metrics", srv.URL + "/metrics"}
			if !tt.pprofOff {
				args = append(args, "--pprof", srv.URL+"/debug/pprof")
			}
			start := time.Now()
			code, _, stderr := runCLI(t, append(args, srv.URL+"/ok")...)
			took := time.Since(start)
			if code != ExitOK {
				t.Fatalf("apiperf run: exit %d, want 0; stderr:\n%s", code, stderr)
			}
			// A bound that tells a capture abandoned from one waited for, not a speed: a busy
			// machine (make test beside stress-ng) took 6.3 s for the 1.5 s run of "truncated".
			if maxWait := max(tt.maxWait, 20*time.Second); took > maxWait {
				t.Errorf("apiperf run took %v, want the capture abandoned within %v", took, maxWait)
			}
			doc, err := result.Load(out)
			if err != nil {
				t.Fatal(err)
			}
			s := doc.Last()
			if s == nil || s.Requests == 0 || s.Elapsed.Duration() < 1400*time.Millisecond {
				t.Fatalf("load result %+v, want a complete 1.5s step with requests", s)
			}
			if !slices.ContainsFunc(doc.Warnings, func(w string) bool { return strings.Contains(w, tt.want) }) {
				t.Errorf("run warnings %q, want one containing %q", doc.Warnings, tt.want)
			}
			if !strings.Contains(stderr, "warning: target: ") {
				t.Errorf("stderr lacks the capture warning:\n%s", stderr)
			}
		})
	}
}

func TestTargetFlagsValidate(t *testing.T) {
	tests := []struct {
		name   string
		f      targetFlags
		window time.Duration
		want   string // "" for valid
	}{
		// the usual flags.
		{"ok", targetFlags{pprof: "http://127.0.0.1:6060/debug/pprof", metrics: "http://[::1]:9090/metrics", topN: 20, levels: []string{"peak", "c=50", "100"}}, time.Second, ""},
		// a URL without scheme.
		{"no scheme", targetFlags{pprof: "127.0.0.1:6060/debug/pprof", topN: 20}, time.Second, "--pprof"},
		// a CPU profile cannot be placed in a run without a duration.
		{"no duration", targetFlags{pprof: "http://127.0.0.1:6060/debug/pprof", topN: 20}, 0, "needs a duration"},
		// metrics alone need no duration.
		{"metrics only", targetFlags{metrics: "http://127.0.0.1:6060/metrics", topN: 20}, 0, ""},
		// an unknown level word.
		{"bad level", targetFlags{pprof: "http://127.0.0.1:1/", topN: 20, levels: []string{"knee"}}, time.Second, `--profile-levels "knee"`},
	}
	for _, tt := range tests {
		err := tt.f.validate(tt.window)
		if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s: validate = %v, want %q", tt.name, err, tt.want)
		}
	}
}

// TestDiffProfiles: `apiperf diff` of two runs with CPU profiles lists the functions
// whose share moved most; the removed dump middleware comes first.
func TestDiffProfiles(t *testing.T) {
	dir := t.TempDir()
	withCPU := func(name string, rows []profcap.TopEntry) string {
		runDir := measuredRun(t, dir, name, 2)
		p := filepath.Join(runDir, "run.json")
		doc, err := result.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		top := &profcap.TopTable{SampleType: "cpu", Unit: "nanoseconds", Total: 100, ByCum: rows, ByFlat: rows}
		doc.Target = &profcap.Record{Steps: []profcap.StepRecord{{Label: "c=2", Profiles: &profcap.Analysis{CPU: top}}}}
		if err := doc.Save(p); err != nil {
			t.Fatal(err)
		}
		return runDir
	}
	serve := func(pct float64) profcap.TopEntry {
		return profcap.TopEntry{Function: "net/http.(*conn).serve", CumPct: pct}
	}
	tail := profcap.TopEntry{Function: "runtime.tail", CumPct: 0.5} // both tables reach below 1%
	a := withCPU("all", []profcap.TopEntry{serve(95), {Function: "target.middlewareDump.func1", CumPct: 45, FlatPct: 2}, tail})
	b := withCPU("none", []profcap.TopEntry{serve(90), tail})
	code, stdout, stderr := runCLI(t, "diff", "--dir", filepath.Join(dir, "out"), "-q", a, b)
	if code != ExitOK {
		t.Fatalf("apiperf diff: exit %d, stderr:\n%s", code, stderr)
	}
	_, table, ok := strings.Cut(stdout, "Target CPU share, A at c=2 -> B at c=2")
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if !ok || len(lines) < 3 || !strings.Contains(lines[2], "-45.00") || !strings.HasSuffix(lines[2], "target.middlewareDump.func1") {
		t.Errorf("diff output lacks the profile table led by the dump middleware (-45 points):\n%s", stdout)
	}
}
