package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/apiperf/apiperf/outfile"
)

// CheckFile reports, before any load is sent, whether a command will be able to write the
// file at path: its directory must exist (or, with mkdir, be creatable in an existing parent)
// and accept new files, and the file, when it is there, must be a writable regular file. It
// creates nothing that is not there already.
func CheckFile(path string, mkdir bool) error {
	if err := outfile.RefuseLink(path); err != nil {
		return err
	}
	if st, err := os.Stat(path); err == nil {
		if st.IsDir() {
			return fmt.Errorf("%s is a directory, want a file", path)
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("cannot write %s: %w", path, unwrapPath(err))
		}
		return f.Close()
	}
	dir := filepath.Dir(path)
	if mkdir {
		return CheckDir(dir)
	}
	return checkExistingDir(dir, path)
}

// CheckDir reports whether dir can receive files: it is a writable directory, or it does not
// exist yet and its parent is one (dir itself may be created: the user named it). It
// creates nothing.
func CheckDir(dir string) error {
	st, err := os.Stat(dir)
	switch {
	case err == nil && !st.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	case err == nil:
		return probe(dir, dir)
	case !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("cannot use %s: %w", dir, unwrapPath(err))
	}
	return checkExistingDir(filepath.Dir(dir), dir)
}

// checkExistingDir: dir must exist and be writable for the sake of target.
func checkExistingDir(dir, target string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("cannot write %s: directory %s does not exist (apiperf makes no parent directories)", target, dir)
	}
	if !st.IsDir() {
		return fmt.Errorf("cannot write %s: %s is not a directory", target, dir)
	}
	return probe(dir, target)
}

// probe creates and removes a file in dir to prove it is writable.
func probe(dir, target string) error {
	f, err := os.CreateTemp(dir, ".apiperf-check-*")
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", target, unwrapPath(err))
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// sqliteMagic opens every SQLite database file; the header is 100 bytes, and its
// user_version (the schema version here) is the big-endian uint32 at offset 60.
const sqliteMagic = "SQLite format 3\x00"

// CheckDB reports, before any load is sent and without opening SQLite, whether the file at
// path can be a history database: it is absent or empty (made when the run is recorded), or
// an SQLite file whose schema is not newer than this apiperf's. Damage beyond the header is
// found when the run is recorded.
func CheckDB(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot read %s: %w", path, unwrapPath(err))
	}
	defer f.Close()
	var h [100]byte
	n, err := io.ReadFull(f, h[:])
	switch {
	case n == 0 && (err == io.EOF || err == nil):
		return nil // SQLite takes an empty file for a new database
	case err != nil && !errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("cannot read %s: %w", path, unwrapPath(err))
	case n < len(h) || string(h[:len(sqliteMagic)]) != sqliteMagic:
		return damaged("checking history database", path, errors.New("not an SQLite database"))
	}
	if v := binary.BigEndian.Uint32(h[60:]); v > schemaVersion {
		return fmt.Errorf("history database %s: schema version %d is newer than this apiperf's %d", path, v, schemaVersion)
	}
	return nil
}
