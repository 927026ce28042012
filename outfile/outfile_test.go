package outfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestPlantedLinks: a link planted as the target is refused and its target untouched; a
// link planted under the old fixed temporary name (run.json.tmp) is never written through.
func TestPlantedLinks(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("precious"), 0o600)
	for _, name := range []string{"report.html", "bench.txt"} {
		link := filepath.Join(dir, name)
		if err := os.Symlink(victim, link); err != nil {
			t.Fatal(err)
		}
		err := Write(link, []byte("overwritten"))
		if err == nil || !strings.Contains(err.Error(), "refusing to write "+link+": it is a symbolic link (to "+victim+")") {
			t.Errorf("Write(link %s) = %v, want it refused naming the link", name, err)
		}
		if _, err := Create(link); err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("Create(link %s) = %v, want it refused", name, err)
		}
	}
	if err := os.Symlink(victim, filepath.Join(dir, "run.json.tmp")); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "run.json")
	if err := Write(run, []byte(`{"ok":1}`)); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious" {
		t.Errorf("the link's target now holds %q, want it untouched", b)
	}
	if b, _ := os.ReadFile(run); string(b) != `{"ok":1}` {
		t.Errorf("run.json = %q", b)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestFailedWriteLeavesNothing: a fill that fails midway leaves no temporary file and the
// old content in place.
func TestFailedWriteLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "report.html")
	os.WriteFile(p, []byte("old report"), 0o644)
	err := WriteWith(p, func(w io.Writer) error {
		io.WriteString(w, "<html>half")
		return syscall.ENOSPC
	})
	if !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("WriteWith = %v, want ENOSPC", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "old report" {
		t.Errorf("report.html = %q, want the old one whole", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("directory holds %d entries, want only report.html", len(ents))
	}
}

// TestFullDisk writes into a real 64 KiB tmpfs (root only; mounted for the
// test, unmounted after it): the error says no space left, nothing half-written stays.
func TestFullDisk(t *testing.T) {
	dir := fullDisk(t)
	p := filepath.Join(dir, "run.json")
	if err := Write(p, []byte("small")); err != nil {
		t.Fatal(err)
	}
	err := Write(p, make([]byte, 1<<20))
	if err == nil || !strings.Contains(err.Error(), "no space left on device") {
		t.Errorf("Write of 1 MiB to a 64 KiB disk = %v, want no space left", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "small" {
		t.Errorf("run.json = %.20q, want the old one whole", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("directory holds %d entries, want only run.json", len(ents))
	}
}

// fullDisk mounts a 64 KiB tmpfs for the test, or skips when it cannot (not root).
func fullDisk(t *testing.T) string {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("cannot mount a small tmpfs (needs root): %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// deadPID is the pid of a process that ran and is gone.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip(err)
	}
	return cmd.Process.Pid
}

// TestStaleTempsRemoved: the temporary files a killed apiperf left (SIGKILL: no deferred
// removal ran) are removed by the next one that writes there; a running process's are kept.
func TestStaleTempsRemoved(t *testing.T) {
	dir := t.TempDir()
	dead, live := deadPID(t), os.Getpid()
	stale := []string{fmt.Sprintf(".run.json.%d-0a1b2c.tmp", dead), fmt.Sprintf("apiperf-trace-%d-123.out", dead)}
	kept := []string{fmt.Sprintf(".run.json.%d-0a1b2d.tmp", live), fmt.Sprintf("apiperf-trace-%d-124.out", live), "apiperf-trace-notes.out", ".other.json.1-x.tmp"}
	for _, n := range append(stale, kept...) {
		os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644)
	}
	if err := Write(filepath.Join(dir, "run.json"), []byte("{}")); err != nil {
		t.Fatal(err)
	}
	f, err := CreateTemp(dir, "apiperf-trace-", ".out")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if !strings.HasPrefix(filepath.Base(f.Name()), fmt.Sprintf("apiperf-trace-%d-", live)) {
		t.Errorf("CreateTemp made %s, want it named with this process's pid", f.Name())
	}
	for _, n := range stale {
		if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
			t.Errorf("%s, left by a process that is gone, is still there", n)
		}
	}
	for _, n := range kept {
		if _, err := os.Lstat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s was removed (%v); want it kept", n, err)
		}
	}
}
