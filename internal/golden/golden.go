// Package golden compares rendered artifacts with golden files in a package's testdata
// directory. `go test -update` rewrites them; a mismatch reports the differing lines.
// It is imported by tests only.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// update is the -update flag of every test binary that imports this package.
var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// Updating reports whether the test binary runs with -update.
func Updating() bool { return *update }

// Check compares got with testdata/name (name may hold a sub-directory), rewriting the file
// under -update; a mismatch fails t with a line diff.
func Check(t testing.TB, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", filepath.FromSlash(name))
	if *update {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("reading golden file %s (go test -update creates it): %v", p, err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from the golden file (go test -update to accept):\n%s", p, Diff(string(want), string(got)))
	}
}

// Diff lists the lines that differ, "-" for want and "+" for got, at most 40 of them.
func Diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < max(len(w), len(g)) && shown < 40; i++ {
		var a, c string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			c = g[i]
		}
		if a != c {
			shown++
			b.WriteString("line " + strconv.Itoa(i+1) + ":\n- " + clip(a) + "\n+ " + clip(c) + "\n")
		}
	}
	return b.String()
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
