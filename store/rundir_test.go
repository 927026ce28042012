package store

import (
	"os"
	"path/filepath"
	"testing"
)

// Each run gets its own directory: the first the name itself, the next ones name-2, name-3;
// an empty directory (made by hand) is taken as it is, a file of that name is skipped.
func TestNewRunDir(t *testing.T) {
	parent := filepath.Join(t.TempDir(), "apiperf-out") // made by NewRunDir
	for _, want := range []string{"h-8080", "h-8080-2", "h-8080-3"} {
		got, err := NewRunDir(parent, "h-8080")
		if err != nil || got != want {
			t.Fatalf("NewRunDir(%s, h-8080) = %q, %v; want %q", parent, got, err, want)
		}
		// the run writes its files: the directory is no longer free
		if err := os.WriteFile(filepath.Join(parent, got, "run.json"), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(parent, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := NewRunDir(parent, "empty"); err != nil || got != "empty" {
		t.Errorf("NewRunDir over an empty directory = %q, %v; want it taken as it is", got, err)
	}
	if err := os.WriteFile(filepath.Join(parent, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := NewRunDir(parent, "file"); err != nil || got != "file-2" {
		t.Errorf("NewRunDir where a file has the name = %q, %v; want file-2", got, err)
	}
	if _, err := NewRunDir(filepath.Join(parent, "no", "such"), "x"); err == nil {
		t.Error("NewRunDir under a missing grandparent succeeded; want an error (no chain of parents)")
	}
}
