// Package outfile writes the files apiperf leaves behind (run.json, reports, charts,
// profiles) whole or not at all, and never through a link someone planted in the
// directory: a temporary file is created exclusively beside the target, filled, synced
// and renamed over it; a symbolic link at the target is refused.
package outfile

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Write writes data to path whole or not at all (see WriteWith).
func Write(path string, data []byte) error {
	return WriteWith(path, func(w io.Writer) error {
		_, err := io.Copy(w, bytes.NewReader(data))
		return err
	})
}

// WriteWith writes what fill produces to path, mode 0644: into a temporary file created
// exclusively (O_EXCL|O_NOFOLLOW) in path's directory, then renamed over path. When fill
// or a write fails (a full disk) nothing is left: no temporary file, and path keeps its
// old content. A symbolic link at path is refused.
func WriteWith(path string, fill func(io.Writer) error) error {
	if err := refuseLink(path); err != nil {
		return err
	}
	tmp, f, err := createTemp(path)
	if err != nil {
		return err
	}
	err = fill(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// Create opens path for writing as it is written (a log, an .hlog): created or truncated,
// never through a symbolic link.
func Create(path string) (*os.File, error) {
	if err := refuseLink(path); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o644)
	if errors.Is(err, syscall.ELOOP) {
		return nil, linkError(path)
	}
	return f, err
}

// RefuseLink fails when path is a symbolic link, as a write to it would: the check a command
// makes of its output paths before it sends anything.
func RefuseLink(path string) error { return refuseLink(path) }

// RefuseLinksIn fails when dir, an existing directory apiperf is to write into, holds a
// symbolic link (apiperf makes none): a write to it would be refused after the load.
func RefuseLinksIn(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil // a directory that cannot be read is the writer's to report
	}
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink != 0 {
			return linkError(filepath.Join(dir, e.Name()))
		}
	}
	return nil
}

// refuseLink fails when path is a symbolic link.
func refuseLink(path string) error {
	if st, err := os.Lstat(path); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		return linkError(path)
	}
	return nil
}

func linkError(path string) error {
	if to, err := os.Readlink(path); err == nil {
		return fmt.Errorf("refusing to write %s: it is a symbolic link (to %s); remove it or choose another directory", path, to)
	}
	return fmt.Errorf("refusing to write %s: it is a symbolic link; remove it or choose another directory", path)
}

// createTemp creates a new file beside path, exclusively and not through a link, named
// ".BASE.PID-RANDOM.tmp"; those a killed apiperf left beside path are removed first.
func createTemp(path string) (string, *os.File, error) {
	dir, base := filepath.Split(path)
	f, err := createIn(dir, "."+base+".", ".tmp")
	if err != nil {
		return "", nil, fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Name(), f, nil
}

// CreateTemp creates a new file in dir (os.TempDir() when "") named prefix+PID-RANDOM+suffix,
// exclusively and not through a link; the files of that name a killed apiperf left in dir (no
// process of their pid runs) are removed first.
func CreateTemp(dir, prefix, suffix string) (*os.File, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	return createIn(dir, prefix, suffix)
}

func createIn(dir, prefix, suffix string) (*os.File, error) {
	removeStale(dir, prefix, suffix)
	for range 16 {
		var r [6]byte
		rand.Read(r[:])
		name := filepath.Join(dir, fmt.Sprintf("%s%d-%s%s", prefix, os.Getpid(), hex.EncodeToString(r[:]), suffix))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
		if errors.Is(err, fs.ErrExist) || errors.Is(err, syscall.ELOOP) {
			continue // taken, or a link planted under the name: another name
		}
		return f, err
	}
	return nil, errors.New("no free temporary name")
}

// removeStale removes the files prefix+PID-*+suffix in dir whose process is gone.
func removeStale(dir, prefix, suffix string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		n := e.Name()
		rest, ok := strings.CutPrefix(n, prefix)
		if !ok || !strings.HasSuffix(n, suffix) || !e.Type().IsRegular() {
			continue
		}
		digits, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(digits)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			os.Remove(filepath.Join(dir, n))
		}
	}
}
