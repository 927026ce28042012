// Package layout_test holds the repository's layout rules as tests, in a package of its own
// so that checking them builds nothing else.
package layout_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
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

// maxFuncLines is the longest a function of internal/cli may be: a command binds flags, a
// runner and a printer to the load session (internal/cli/session.go); a longer one is
// doing the session's or a library's work.
const maxFuncLines = 80

// Every function of the CLI (tests aside) is at most maxFuncLines long.
func TestFunctionsAreShort(t *testing.T) {
	files, err := filepath.Glob("../cli/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("listing the package's files: %v (%d files)", err, len(files))
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			checked++
			if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > maxFuncLines {
				t.Errorf("%s: %s is %d lines, over %d: move what it does into the session or a library", fset.Position(fd.Pos()), fd.Name.Name, n, maxFuncLines)
			}
		}
	}
	if checked < 100 {
		t.Errorf("checked %d functions, want the package's (over 100)", checked)
	}
}
