package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// liveMainEnv makes this test binary act as `apiperf` (for tests that run it under a
// pseudo-terminal).
const liveMainEnv = "APIPERF_LIVE_TEST_MAIN"

func init() {
	if os.Getenv(liveMainEnv) == "1" {
		os.Exit(Run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
}

var numbers = regexp.MustCompile(`[0-9]+(\.[0-9]+)?([a-zA-Z%]+)?`)

// shape replaces the numbers of a summary so that two runs' layouts can be compared.
// Columns are aligned to the numbers' widths, so runs of spaces count as one. The lines
// that say what the machine was doing (conditions: steal, other processes' CPU; the
// generator's own bounds and warnings) are the machine's, not the layout's: one run may
// have them and the next not, so they are left out.
func shape(s string) string {
	s = machineLines.ReplaceAllString(s, "")
	return spaces.ReplaceAllString(numbers.ReplaceAllString(s, "N"), " ")
}

var machineLines = regexp.MustCompile(`(?m)^ *(Conditions|Generator-bound|Generator-limited|Warning): .*\n?`)

var spaces = regexp.MustCompile(` +`)

// TestTerminalView runs apiperf under a pseudo-terminal (script(1)) with stdout to a file:
// stderr shows the live view (redrawn in place, then erased), stdout has the wrk-layout
// summary with the same layout as a run whose stderr is not a terminal, and -q turns the
// view off.
func TestTerminalView(t *testing.T) {
	scriptPath, err := exec.LookPath("script")
	needTool(t, "script(1)", err == nil, "install bsdutils")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	url := liveTarget(t)
	dir := t.TempDir()
	args := "-c 4 -t 2 -d 2500ms '" + url + "'"
	underPTY := func(extra, out string) string {
		t.Helper()
		cmd := exec.Command(scriptPath, "-qec", exe+" run "+extra+" "+args+" > "+out, "/dev/null")
		cmd.Env = append(os.Environ(), liveMainEnv+"=1", "TERM=xterm")
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("script -c 'apiperf run %s %s': %v\n%s", extra, args, err, b)
		}
		return string(b)
	}
	term := underPTY("", filepath.Join(dir, "out.txt"))
	for _, want := range []string{"req/s", "latency  p50", "errors   0", "connections 4", "\033[J"} {
		if !strings.Contains(term, want) {
			t.Errorf("the terminal shows no %q:\n%q", want, term)
		}
	}
	if !strings.Contains(term, "\r\033[3A") && !strings.Contains(term, "\r\033[4A") {
		t.Errorf("the view is never redrawn in place (no cursor-up):\n%q", term)
	}
	quiet := underPTY("-q", filepath.Join(dir, "quiet.txt"))
	if strings.Contains(quiet, "req/s") || strings.Contains(quiet, "\033[") {
		t.Errorf("with -q the terminal shows %q, want nothing", quiet)
	}

	// The summary on stdout: no escape sequences, and the layout of a run without a terminal.
	got, _ := os.ReadFile(filepath.Join(dir, "out.txt"))
	if strings.Contains(string(got), "\033") {
		t.Errorf("stdout has escape sequences:\n%q", got)
	}
	code, plain, stderr := runCLI(t, "run", "-c", "4", "-t", "2", "-d", "2500ms", url)
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	if strings.Contains(stderr, "\033") {
		t.Errorf("stderr is not a terminal but has escape sequences: %q", stderr)
	}
	if shape(string(got)) != shape(plain) {
		t.Errorf("the summary's layout under a terminal differs from a plain run's:\n%s\n--- plain:\n%s", got, plain)
	}
}
