package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/target"
)

// junitFailures reads a JUnit file with junitparser (Debian's python3-junitparser, which
// .ci/run installs: a reader no one here wrote) and returns its test and failure counts.
func junitFailures(t *testing.T, path string) string {
	t.Helper()
	const py = "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import junitparser").Run(); err != nil {
		t.Skip("no junitparser for " + py + " (apt-get install python3-junitparser; .ci/run does)")
	}
	out, err := exec.Command(py, "-c", `
import sys
from junitparser import JUnitXml
x = JUnitXml.fromfile(sys.argv[1])
print(sum(s.tests for s in x), sum(s.failures for s in x), sum(s.skipped for s in x))`, path).CombinedOutput()
	if err != nil {
		t.Fatalf("junitparser on %s: %v\n%s", path, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestRunObjective: --objective fails a run whose p99 is over budget (exit 1, naming the term
// and both values, in run.json and the JUnit file), passes one within it (JUnit: no failure),
// and never passes a run that got no response.
func TestRunObjective(t *testing.T) {
	url := startTarget(t, target.Config{}) + "/knob?delay=5ms"
	dir := t.TempDir()
	junit, out := filepath.Join(dir, "slow.xml"), filepath.Join(dir, "slow.json")
	code, stdout, stderr := runCLI(t, "run", "-q", "-c2", "-t1", "-d500ms", "--no-history", "--objective", "p99<=1ms,success>=99%", "--junit", junit, "-o", out, url)
	if code != ExitFailed || !strings.Contains(stderr, "objective not met: p99<=1ms at c=2: p99 ") || !strings.Contains(stderr, "> 1ms (+") ||
		!strings.Contains(stdout, "Objective p99<=1ms,success>=99%: NOT MET (1 of 2 checks failed)") {
		t.Errorf("run with p99<=1ms against a 5 ms target = exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit 1 naming p99 and both values", code, stdout, stderr)
	}
	if got := junitFailures(t, junit); got != "2 1 0" {
		t.Errorf("JUnit of the failed objective: tests, failures, skipped = %s; want 2 1 0", got)
	}
	doc, err := result.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Objectives == nil || len(doc.Objectives.Failed()) != 1 || doc.Objectives.Failed()[0].Term != "p99<=1ms" {
		t.Errorf("run.json objectives = %+v; want p99<=1ms failed", doc.Objectives)
	}

	pass := filepath.Join(dir, "pass.xml")
	code, stdout, stderr = runCLI(t, "run", "-q", "-c2", "-t1", "-d500ms", "--no-history", "--objective", "p99<=10s,errors<=1%", "--junit", pass, url)
	if code != ExitOK || !strings.Contains(stdout, "Objective p99<=10s,errors<=1%: met (2 checks)") {
		t.Errorf("run within its objective = exit %d\n%s%s", code, stdout, stderr)
	}
	if got := junitFailures(t, pass); got != "2 0 0" {
		t.Errorf("JUnit of a met objective: %s; want 2 0 0", got)
	}

	// A port nobody listens on: no response, so even a lenient objective fails.
	dead := filepath.Join(dir, "dead.xml")
	code, _, stderr = runCLI(t, "run", "-q", "-c1", "-t1", "-d300ms", "--no-history", "--objective", "p99<=1h", "--junit", dead, "http://127.0.0.1:1/")
	if code != ExitFailed {
		t.Errorf("run with no response and an objective = exit %d: %s; want 1", code, stderr)
	}
	if _, err := os.Stat(dead); err == nil {
		if got := junitFailures(t, dead); !strings.HasPrefix(got, "1 1") {
			t.Errorf("JUnit of a run with no response: %s; want its one term failed", got)
		}
	}

	if code, _, stderr := runCLI(t, "run", "--objective", "p99<=fast", url); code != ExitUsage || !strings.Contains(stderr, "--objective") {
		t.Errorf("a bad --objective = exit %d: %s; want 2 before any traffic", code, stderr)
	}
}

// TestGateJUnitAndSummary: the gate's checks go to --junit (a regression is a failure) and
// its Markdown to the GitHub job summary when GITHUB_STEP_SUMMARY names one.
func TestGateJUnitAndSummary(t *testing.T) {
	fast := startTarget(t, target.Config{}) + "/healthz"
	slow := startTarget(t, target.Config{}) + "/knob?delay=20ms"
	dir := t.TempDir()
	base, cur := filepath.Join(dir, "base.json"), filepath.Join(dir, "cur.json")
	for p, url := range map[string]string{base: fast, cur: slow} {
		if code, _, stderr := runCLI(t, "run", "-q", "-c2", "-t1", "-d300ms", "--count", "4", "--no-history", "-o", p, url); code != ExitOK {
			t.Fatalf("run %s = exit %d: %s", url, code, stderr)
		}
	}
	summary := filepath.Join(dir, "summary.md")
	t.Setenv(stepSummaryEnv, summary)
	junit := filepath.Join(dir, "gate.xml")
	code, stdout, stderr := runCLI(t, "gate", "--baseline", base, "--current", cur, "--allow-mismatch", "--junit", junit)
	if code != ExitFailed {
		t.Errorf("gate of a 20 ms target against a fast one = exit %d\n%s%s; want 1", code, stdout, stderr)
	}
	if got := junitFailures(t, junit); !strings.HasPrefix(got, "3 ") || strings.HasPrefix(got, "3 0") {
		t.Errorf("gate JUnit tests, failures, skipped = %s; want 3 checks, some failed", got)
	}
	b, err := os.ReadFile(summary)
	if err != nil || !strings.Contains(string(b), "apiperf gate: FAIL") {
		t.Errorf("job summary %s: %v\n%s\nwant the gate's Markdown", summary, err, b)
	}
}

// TestSweepObjective: a sweep judges the objective at every level (one JUnit case a term and
// level) and exits 1 when a level misses it.
func TestSweepObjective(t *testing.T) {
	url := startTarget(t, target.Config{}) + "/knob?delay=5ms"
	dir := t.TempDir()
	junit := filepath.Join(dir, "sweep.xml")
	code, stdout, stderr := runCLI(t, "sweep", "-q", "--levels", "1,2", "-d", "300ms", "--warmup", "0", "--no-history", "--dir", dir,
		"--objective", "p99<=1ms", "--junit", junit, url)
	if code != ExitFailed || !strings.Contains(stdout, "FAIL p99<=1ms at c=1") || !strings.Contains(stdout, "FAIL p99<=1ms at c=2") {
		t.Errorf("sweep with p99<=1ms against a 5 ms target = exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if got := junitFailures(t, junit); got != "2 2 0" {
		t.Errorf("sweep JUnit tests, failures, skipped = %s; want 2 2 0", got)
	}
}
