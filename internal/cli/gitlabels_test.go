package cli

import (
	"context"
	"os/exec"
	"strings"
	"testing"
)

// TestGitLabels: inside a real repository the run is labelled with its commit and branch; outside
// one it gets no labels.
func TestGitLabels(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not on PATH")
	}
	dir := t.TempDir()
	t.Chdir(dir)
	if m := gitLabels(context.Background()); len(m) != 0 {
		t.Errorf("outside a repository: labels %v, want none", m)
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "feat"},
		{"-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "--allow-empty", "-m", "x"},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	m := gitLabels(context.Background())
	if m["commit"] != strings.TrimSpace(string(head)) || m["branch"] != "feat" || len(m) != 2 {
		t.Errorf("labels %v, want commit %s and branch feat", m, head)
	}
}
