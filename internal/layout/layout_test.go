// Package layout_test holds the repository's layout rules as tests, in a package of its own
// so that checking them builds nothing else.
package layout_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxFileLines is the longest a non-test Go file of the repository may be (STYLE.md: files
// under ~600 lines; issue 41 set 500): a longer one holds two concepts, or two files' work.
const maxFileLines = 500

// TestFileSizes keeps every non-test Go file of the repository at most maxFileLines long.
func TestFileSizes(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		if n := bytes.Count(b, []byte("\n")); n > maxFileLines {
			rel, _ := filepath.Rel(root, path)
			t.Errorf("%s has %d lines; split it (at most %d in a non-test file)", rel, n, maxFileLines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Errorf("checked %d Go files; want the whole repository (is the test run from internal/layout?)", checked)
	}
}
