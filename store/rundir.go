package store

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// maxRunDirs bounds the search for a free run directory name.
const maxRunDirs = 10000

// NewRunDir makes a run directory for name under parent (which is made when missing; its
// own parent must exist) and returns the name it got: name itself when parent/name does not
// exist or is empty, else the first of name-2, name-3, ... that does not, so that a second
// run never replaces the files of the first.
func NewRunDir(parent, name string) (string, error) {
	if err := os.Mkdir(parent, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("making %s: %w", parent, unwrapPath(err))
	}
	for i := 1; i <= maxRunDirs; i++ {
		n := name
		if i > 1 {
			n = name + "-" + strconv.Itoa(i)
		}
		dir := filepath.Join(parent, n)
		err := os.Mkdir(dir, 0o755)
		if err == nil || (errors.Is(err, os.ErrExist) && emptyDir(dir)) {
			return n, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("making %s: %w", dir, unwrapPath(err))
		}
	}
	return "", fmt.Errorf("%s holds %s-2 to %s-%d already: pass --name or another --dir", parent, name, name, maxRunDirs)
}

// emptyDir reports whether dir is a directory with nothing in it.
func emptyDir(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.IsDir() {
		return false
	}
	_, err = f.Readdirnames(1)
	return errors.Is(err, io.EOF)
}
