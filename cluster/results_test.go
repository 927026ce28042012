package cluster

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// freePort is a loopback address nothing listens on (for a server that binds it itself).
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestResultsHandoff: a served run directory is refused to a wrong token (and still
// served), fetched whole by the right one into another directory, and the server ends once
// the fetcher says it has it.
func TestResultsHandoff(t *testing.T) {
	src := t.TempDir()
	files := map[string]string{"run.json": `{"version":2}`, "report.html": "<html>", "hlog/c=3.hlog": "#hlog", "empty.txt": ""}
	for name, body := range files {
		os.MkdirAll(filepath.Join(src, filepath.Dir(name)), 0o755)
		if err := os.WriteFile(filepath.Join(src, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Symlink("/etc/passwd", filepath.Join(src, "link")) // never sent
	addr := freePort(t)
	served := make(chan error, 1)
	go func() { served <- ServeResults(context.Background(), addr, src, testToken, time.Minute, nil) }()

	dst := filepath.Join(t.TempDir(), "out")
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) { // until it listens
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ServeResults does not listen on %s after 20s: %v", addr, err)
		}
	}
	if _, err := FetchResults(context.Background(), addr, "wrong-token-0123456789", dst, 0); !errors.Is(err, ErrRefused) {
		t.Fatalf("FetchResults with a wrong token = %v; want %v", err, ErrRefused)
	}
	got, err := FetchResults(context.Background(), addr, testToken, dst, 0)
	if err != nil {
		t.Fatalf("FetchResults = %v", err)
	}
	slices.Sort(got)
	if want := []string{"empty.txt", "hlog/c=3.hlog", "report.html", "run.json"}; !slices.Equal(got, want) {
		t.Errorf("FetchResults wrote %q; want %q", got, want)
	}
	for name, body := range files {
		if b, err := os.ReadFile(filepath.Join(dst, name)); err != nil || string(b) != body {
			t.Errorf("%s: %q, %v; want %q", name, b, err, body)
		}
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("ServeResults = %v after the fetch; want nil", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("ServeResults still serving 20s after the fetch")
	}
}

// TestResultsNotFetched: nobody fetches, ServeResults gives up after its patience.
func TestResultsNotFetched(t *testing.T) {
	err := ServeResults(context.Background(), freePort(t), t.TempDir(), testToken, 50*time.Millisecond, nil)
	if !errors.Is(err, ErrNotFetched) {
		t.Errorf("ServeResults = %v; want %v", err, ErrNotFetched)
	}
}

// entry is one tar entry of a hostile stream.
type entry struct {
	name string
	typ  byte
	body string
	link string
}

func tarOf(t *testing.T, es ...entry) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range es {
		if err := tw.WriteHeader(&tar.Header{Name: e.name, Typeflag: e.typ, Size: int64(len(e.body)), Mode: 0o644, Linkname: e.link}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(e.body))
	}
	tw.Close()
	return b.Bytes()
}

// TestUntarHostile: what a hostile coordinator (or a man in the middle of a plain link) could
// send is refused with a line naming it, and nothing lands outside the directory.
func TestUntarHostile(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries []entry
		setup   func(dir, outside string) // before unpacking
		want    string
	}{
		{"parent", []entry{{name: "../evil", typ: tar.TypeReg, body: "x"}}, nil, "outside the directory"},
		{"parent inside a path", []entry{{name: "a/../../evil", typ: tar.TypeReg, body: "x"}}, nil, "outside the directory"},
		{"absolute", []entry{{name: "/tmp/evil", typ: tar.TypeReg, body: "x"}}, nil, "outside the directory"},
		{"symbolic link", []entry{{name: "l", typ: tar.TypeSymlink, link: "/etc"}}, nil, "not a regular file"},
		{"hard link", []entry{{name: "l", typ: tar.TypeLink, link: "/etc/passwd"}}, nil, "not a regular file"},
		{"device", []entry{{name: "d", typ: tar.TypeChar}}, nil, "not a regular file"},
		{"over the size bound", []entry{{name: "a", typ: tar.TypeReg, body: strings.Repeat("x", 600)}, {name: "b", typ: tar.TypeReg, body: strings.Repeat("x", 600)}}, nil, "more than 1000 bytes"},
		{"the same file twice", []entry{{name: "a", typ: tar.TypeReg, body: "1"}, {name: "a", typ: tar.TypeReg, body: "2"}}, nil, "exists"},
		{"through a link already in the directory", []entry{{name: "link/evil", typ: tar.TypeReg, body: "x"}},
			func(dir, outside string) { os.Symlink(outside, filepath.Join(dir, "link")) }, "escapes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, outside := t.TempDir(), t.TempDir()
			if tc.setup != nil {
				tc.setup(dir, outside)
			}
			_, err := untar(bytes.NewReader(tarOf(t, tc.entries...)), dir, 1000)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("untar = %v; want an error saying %q", err, tc.want)
			}
			if left, _ := os.ReadDir(outside); len(left) > 0 {
				t.Errorf("files outside the directory: %v", left)
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "evil")); err == nil {
				t.Error("a file landed beside the directory")
			}
		})
	}
}
