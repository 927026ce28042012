package loadtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// readmeBlock is the first ```go block of README.md's section `## Load tests in go test`.
func readmeBlock(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## Load tests in go test\n")
	if !ok {
		t.Fatal("README.md has no section ## Load tests in go test")
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	_, code, ok := strings.Cut(sec, "\n```go\n")
	if !ok {
		t.Fatal("README.md's ## Load tests in go test has no ```go block")
	}
	code, _, ok = strings.Cut(code, "\n```\n")
	if !ok {
		t.Fatal("README.md's ```go block in ## Load tests in go test does not end")
	}
	return code + "\n"
}

// TestReadmeGoTest pastes README's example into a fresh module that requires this one by a
// replace directive to the checkout, as a user would, and runs its benchmark and its test.
func TestReadmeGoTest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a module of its own (-short)")
	}
	out, err := goTestIn(t, userModule(t, readmeBlock(t)), 4*time.Minute, "-count=2", "-bench", ".", "-benchtime=200ms", ".")
	if err != nil {
		t.Fatalf("go test -bench . -count 2 in a module pasted from README: %v\n%s", err, out)
	}
	t.Logf("go test -bench . -count 2 in the pasted module:\n%s", out)
	// benchstat reads a line per run: name, iterations, then value-unit pairs.
	row := regexp.MustCompile(`(?m)^BenchmarkUsers-\d+\s+\d+\s+[\d.]+ ns/op.*\s[\d.]+ p99-ns\s.*$`)
	rows := row.FindAllString(string(out), -1)
	if len(rows) != 2 {
		t.Fatalf("want 2 BenchmarkUsers lines with p99-ns, got %d in:\n%s", len(rows), out)
	}
	for _, unit := range []string{"req/s", "p50-ns", "p999-ns", "CPU-ns/req", "allocs/req", "B/req"} {
		if !strings.Contains(rows[0], " "+unit) {
			t.Errorf("benchmark line %q has no %s", rows[0], unit)
		}
	}
	if !regexp.MustCompile(`(?m)^ok\s+example.com/api`).Match(out) {
		t.Errorf("the pasted module's tests did not pass:\n%s", out)
	}
}

// userModule writes a module of its own holding testFile as api_test.go, requiring this one by
// a replace directive to the checkout, as a user would before a release; it returns its
// directory.
func userModule(t *testing.T, testFile string) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	goMod := "module example.com/api\n\ngo 1.26\n\nrequire github.com/apiperf/apiperf v0.0.0\n\nreplace github.com/apiperf/apiperf => " + root + "\n"
	sum, err := os.ReadFile(filepath.Join(root, "go.sum")) // the checkout's sums cover its requirements
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"go.mod": goMod, "go.sum": string(sum), "api_test.go": testFile} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// goTestIn runs `go test args...` in dir within timeout and returns its output; it skips t
// without a go command.
func goTestIn(t *testing.T, dir string, timeout time.Duration, args ...string) ([]byte, error) {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, gobin, append([]string{"test"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod -buildvcs=false")
	return cmd.CombinedOutput()
}
