package cli

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// fullTmpfs mounts a 256 KiB tmpfs for the test and fills it (root only, else skip).
func fullTmpfs(t *testing.T) string {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=256k"); err != nil {
		t.Skipf("cannot mount a small tmpfs (needs root): %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	return dir
}

// TestFullDisk: on a full disk, run says "no space left" (not SQLite's "disk I/O error"),
// says the run is not in the history, and leaves no temporary or empty file behind.
func TestFullDisk(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	full := fullTmpfs(t)
	elsewhere := t.TempDir()
	for _, tc := range []struct {
		name, out, db string
	}{
		{"run.json on the full disk", filepath.Join(full, "run.json"), filepath.Join(elsewhere, "h.db")},
		{"history on the full disk", filepath.Join(elsewhere, "run.json"), filepath.Join(full, "h.db")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(dbEnv, tc.db)
			_, _, stderr := runCLI(t, "run", "-n", "10", "-c", "1", "-o", tc.out, srv.URL)
			if !strings.Contains(stderr, "no space left on device") || !strings.Contains(stderr, notRecorded) {
				t.Errorf("stderr %q: want no space left named and the history row said to be skipped", stderr)
			}
			ents, _ := os.ReadDir(full)
			for _, e := range ents {
				// (an empty SQLite file is a valid empty database, not a truncated write)
				if st, _ := e.Info(); e.Name() != "filler" && !strings.HasSuffix(e.Name(), ".db") && (strings.HasSuffix(e.Name(), ".tmp") || st.Size() == 0) {
					t.Errorf("left on the full disk: %s (%d bytes)", e.Name(), st.Size())
				}
			}
			t.Log(strings.TrimSpace(stderr))
		})
	}
}
