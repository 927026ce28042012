package cli

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// Findings 4, 5 and 7 of issue 12: bad input is refused before any traffic, with exit 2 and
// one line, and a server that counts what it receives sees nothing; no directory is created
// that the user did not name.
func TestRefuseBeforeTraffic(t *testing.T) {
	srv, n := sourceServer(t)
	url := srv.URL + "/"
	dir := t.TempDir()
	file := filepath.Join(dir, "file.txt")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	corrupt := filepath.Join(dir, "corrupt.db")
	if err := os.WriteFile(corrupt, []byte("this is not a database, not at all, and it is long enough to be read as a header"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	for _, tc := range []struct {
		name string
		args []string
		want string // in the one line on stderr
	}{
		{"-o in a missing directory", []string{"run", "-n", "5", "-o", filepath.Join(missing, "deeper", "run.json"), url}, "does not exist"},
		{"-o under a file", []string{"run", "-n", "5", "-o", filepath.Join(file, "run.json"), url}, "not a directory"},
		{"-o is a directory", []string{"run", "-n", "5", "-o", dir, url}, "is a directory"},
		{"--bench in a missing directory", []string{"run", "-n", "5", "--bench", filepath.Join(missing, "deeper", "b.txt"), url}, "does not exist"},
		{"--db in missing directories", []string{"run", "-n", "5", "--db", filepath.Join(missing, "deeper", "h.db"), url}, "--db"},
		{"--db not a database", []string{"run", "-n", "5", "--db", corrupt, url}, "--db"},
		{"sweep --dir under a file", []string{"sweep", "--levels", "1", "-d", "200ms", "--dir", filepath.Join(file, "out"), url}, "not a directory"},
		{"sweep --dir in missing directories", []string{"sweep", "--levels", "1", "-d", "200ms", "--dir", filepath.Join(missing, "deeper"), url}, "does not exist"},
		{"sweep --db in missing directories", []string{"sweep", "--levels", "1", "-d", "200ms", "--dir", dir, "--db", filepath.Join(missing, "deeper", "h.db"), url}, "--db"},
		{"capacity --dir is a file", []string{"capacity", "-d", "200ms", "--dir", file, url}, "not a directory"},
		{"capacity --slo ''", []string{"capacity", "-d", "200ms", "--dir", dir, "--slo", "", url}, "--slo: empty objective"},
		{"sweep --slo ''", []string{"sweep", "--levels", "1", "-d", "200ms", "--dir", dir, "--slo", " ", url}, "--slo: empty objective"},
		{"-n 0", []string{"run", "-n", "0", url}, "-n 0"},
		{"-R 0", []string{"run", "-R", "0", "-d", "1s", url}, "-R 0"},
		{"--max-connections 0", []string{"run", "-R", "10", "--max-connections", "0", "-d", "1s", url}, "--max-connections 0"},
		{"Content-Length without a body", []string{"run", "-n", "5", "-H", "Content-Length: 5", url}, "contradicts the body of 0 bytes"},
		{"Content-Length not the body's", []string{"run", "-n", "5", "-m", "POST", "--body", "abc", "-H", "Content-Length: 5", url}, "contradicts the body of 3 bytes"},
		{"chunked over a plain body", []string{"run", "-n", "5", "-m", "POST", "--body", "abc", "-H", "Transfer-Encoding: chunked", url}, "not chunked"},
		{"gate --markdown in a missing directory", []string{"gate", "--baseline", dir, "--markdown", filepath.Join(missing, "deeper", "g.md")}, "does not exist"},
		{"ab --markdown in a missing directory", []string{"ab", "--count", "10", "--markdown", filepath.Join(missing, "deeper", "ab.md"), url, url}, "does not exist"},
		{"ab -o under a file", []string{"ab", "--count", "10", "-o", filepath.Join(file, "out"), url, url}, "not a directory"},
		{"history on a corrupt database", []string{"history", "list", "--db", corrupt}, "corrupt.db"},
		{"gate on a corrupt database", []string{"gate", "--baseline", "label=side:x", "--db", corrupt}, "corrupt.db"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tc.args...)
			lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			if code != ExitUsage || len(lines) != 1 || !strings.Contains(stderr, tc.want) {
				t.Errorf("apiperf %s = exit %d, stderr %q; want exit 2 and one line with %q", strings.Join(tc.args, " "), code, stderr, tc.want)
			}
		})
	}
	if got := n.Load(); got != 0 {
		t.Errorf("the server received %d requests; want none (every case is refused before traffic)", got)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("%s was created; apiperf creates no directory the user did not name", missing)
	}
}

// serve --fault starts the hostile target on loopback only.
func TestServeFaultBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--fault", "nope", "--addr", "127.0.0.1:0"},
		{"serve", "--fault", "twice", "--addr", "192.0.2.1:80"},
	} {
		if code, _, stderr := runCLI(t, args...); code != ExitUsage || !strings.Contains(stderr, "hostile target") {
			t.Errorf("apiperf %s = exit %d, %q; want 2 and the reason", strings.Join(args, " "), code, stderr)
		}
	}
}

// TestPlantedLinkRefusedBeforeTraffic: a symbolic link planted where run.json is to be written
// (-o, or inside an existing sweep directory) is refused with exit 2 before any request, not
// after the whole load ran.
func TestPlantedLinkRefusedBeforeTraffic(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("keep"), 0o644)
	link := filepath.Join(dir, "run.json")
	if err := os.Symlink(victim, link); err != nil {
		t.Skip(err)
	}
	sweepDir := filepath.Join(dir, "sweeps", "api")
	os.MkdirAll(sweepDir, 0o755)
	os.Symlink(victim, filepath.Join(sweepDir, "run.json"))
	for _, args := range [][]string{
		{"run", "-c", "1", "-t", "1", "-d", "300ms", "--no-history", "-o", link, srv.URL},
		{"sweep", "--levels", "1", "-d", "300ms", "--warmup", "0", "--no-history", "--dir", filepath.Join(dir, "sweeps"), "--name", "api", srv.URL},
	} {
		code, _, stderr := runCLI(t, args...)
		if code != ExitUsage || !strings.Contains(stderr, "symbolic link") || hits.Load() != 0 {
			t.Errorf("apiperf %s = %d, %q, %d requests sent; want 2 naming the link before any request", args[0], code, stderr, hits.Load())
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("the link's target was overwritten: %q", b)
	}
}
