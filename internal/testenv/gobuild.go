package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// GoProgram builds a Go program from files (name -> source; a go.mod among them) committed
// to a git repository of its own, so the toolchain stamps its revision; edits (name ->
// source) are written after the commit, making the tree modified. It returns the
// executable and the revision. flags are more go build flags (-race).
func GoProgram(t testing.TB, files, edits map[string]string, flags ...string) (exe, rev string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a Go program; skipped with -short")
	}
	dir := t.TempDir()
	write := func(m map[string]string) {
		for name, body := range m {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Skipf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	write(files)
	git("init", "-q")
	git("add", ".")
	git("commit", "-q", "-m", "program")
	rev = git("rev-parse", "HEAD")
	write(edits)
	exe = filepath.Join(dir, "program")
	cmd := exec.Command("go", append(append([]string{"build", "-buildvcs=true", "-o", exe}, flags...), ".")...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %v: %v\n%s", flags, err, out)
	}
	return exe, rev
}

// GoVersion is the version of the go command on PATH (go env GOVERSION).
func GoVersion(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOVERSION").Output()
	if err != nil {
		t.Fatalf("go env GOVERSION: %v", err)
	}
	return strings.TrimSpace(string(out))
}
