package cli

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/apiperf/apiperf/internal/tracetarget"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/verdict"
)

// TestSweepTraceGOMAXPROCS is the end-to-end check: a sweep with --pprof of a
// CPU-bound target run with GOMAXPROCS=1 prints the trace line, keeps trace.out (which go
// tool trace parses), and the verdict names GOMAXPROCS; after setting GOMAXPROCS to the
// cores, diff shows the trace summaries side by side.
func TestSweepTraceGOMAXPROCS(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("GOMAXPROCS=1 is below the cores only on a machine with 2 or more")
	}
	dir := t.TempDir()
	sweep := func(name, procs string) *result.Run {
		base := tracetarget.Start(t, "GOMAXPROCS="+procs)
		code, out, errOut := runCLI(t, "sweep", "--levels", "4", "-d", "3s", "--no-history", "-q", "--dir", dir, "--name", name,
			"--pprof", base+"/debug/pprof", base+tracetarget.CPU)
		if code != ExitOK {
			t.Fatalf("apiperf sweep (GOMAXPROCS=%s) = %d, stderr %s", procs, code, errOut)
		}
		line := regexp.MustCompile(`(?m)^Target trace at c=4 \(1s\): GC [0-9.]+ cycles/s, STW \S+ \(max \S+\), GC CPU \d+% \(assist \d+%\), sched latency p50 \S+ p99 \S+, GOMAXPROCS ` + procs + ` \([0-9.]+ busy\)`)
		if !line.MatchString(out) {
			t.Errorf("sweep output has no trace line of the issue's shape for GOMAXPROCS=%s:\n%s", procs, out)
		}
		if strings.Contains(errOut, "trace") {
			t.Errorf("stderr mentions the trace: %s", errOut)
		}
		r, err := result.Load(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		traced := r.Target.Traced()
		if len(traced) != 1 || traced[0].Trace.Summary.GOMAXPROCS != map[string]int{"1": 1, "2": 2}[procs] {
			t.Fatalf("run.json traced steps %+v; want c=4 with GOMAXPROCS %s", traced, procs)
		}
		// go tool trace reads every saved trace.out.
		for _, f := range traced[0].Files {
			if !strings.HasSuffix(f, "trace.out") {
				continue
			}
			cmd := exec.Command("go", "tool", "trace", "-d=parsed", filepath.Join(dir, name, f))
			if out, err := cmd.CombinedOutput(); err != nil || len(out) == 0 {
				t.Errorf("go tool trace -d=parsed %s: %v\n%.500s", f, err, out)
			}
		}
		return r
	}
	one := sweep("procs1", "1")
	if c := one.Verdict.Claim(verdict.GOMAXPROCSLimited); c == nil || c.Level != "c=4" || !strings.Contains(c.Fix, "GOMAXPROCS=") {
		t.Errorf("verdict of a CPU-bound target with GOMAXPROCS=1 on %d cores: %v; want a gomaxprocs-limited claim at c=4 with its fix", runtime.NumCPU(), one.Verdict.Kinds())
	}
	two := sweep("procs2", "2")
	if two.Verdict.Has(verdict.GOMAXPROCSLimited) {
		t.Errorf("verdict with GOMAXPROCS=2 on %d cores still claims gomaxprocs-limited: %v", runtime.NumCPU(), two.Verdict.Claim(verdict.GOMAXPROCSLimited))
	}
	code, out, errOut := runCLI(t, "diff", "-q", "--dir", filepath.Join(dir, "diff"), filepath.Join(dir, "procs1"), filepath.Join(dir, "procs2"))
	if code != ExitOK {
		t.Fatalf("apiperf diff = %d, stderr %s", code, errOut)
	}
	for _, want := range []string{"Target execution trace, A at c=4 -> B at c=4:", "GOMAXPROCS                          1 -> 2", "GC cycles per second"} {
		if !strings.Contains(out, want) {
			t.Errorf("diff output lacks %q:\n%s", want, out)
		}
	}
}

// TestTraceSecondsBadInput: a negative or non-finite --trace-seconds is one line and exit 2,
// before any traffic (the URL is never dialled).
func TestTraceSecondsBadInput(t *testing.T) {
	for _, v := range []string{"-1", "NaN", "+Inf"} {
		code, _, stderr := runCLI(t, "run", "-d", "1s", "--pprof", "http://127.0.0.1:1/debug/pprof", "--trace-seconds", v, "http://127.0.0.1:1/")
		if code != ExitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "--trace-seconds") {
			t.Errorf("apiperf run --trace-seconds %s = exit %d, stderr %q; want exit 2 and one line naming the flag", v, code, stderr)
		}
	}
}

// --trace-seconds without --pprof is refused (exit 2, one line) instead of being silently
// ignored, on every command that takes it; --trace-seconds 0 (none) needs nothing.
func TestTraceSecondsNeedsPprof(t *testing.T) {
	for _, args := range [][]string{
		{"run", "-d", "1s", "--trace-seconds", "2", "http://127.0.0.1:1/"},
		{"sweep", "--levels", "1", "-d", "1s", "--trace-seconds", "2", "--dir", t.TempDir(), "http://127.0.0.1:1/"},
		{"capacity", "-d", "1s", "--trace-seconds", "2", "--dir", t.TempDir(), "http://127.0.0.1:1/"},
	} {
		code, _, stderr := runCLI(t, args...)
		if code != ExitUsage || stderr != "apiperf: --trace-seconds needs --pprof: the trace is fetched from the target's net/http/pprof\n" {
			t.Errorf("apiperf %s = exit %d, stderr %q; want exit 2 saying --trace-seconds needs --pprof", strings.Join(args, " "), code, stderr)
		}
	}
	if code, _, stderr := runCLI(t, "run", "--trace-seconds", "0", "-c", "0", "http://127.0.0.1:1/"); code != ExitUsage || strings.Contains(stderr, "--pprof") {
		t.Errorf("--trace-seconds 0 without --pprof: exit %d, stderr %q; want no complaint about --pprof", code, stderr)
	}
}
