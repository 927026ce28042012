package cli

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apiperf/apiperf/result"
)

// TestRunResultsDir: run --results-dir writes the run's directory (run.json and what is
// rendered from it) as a new directory named for the target, a second run beside the first,
// and a directory that cannot be made is refused before any request.
func TestRunResultsDir(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	host, port, _ := net.SplitHostPort(u.Host)
	parent := filepath.Join(t.TempDir(), "apiperf-out")
	for i, name := range []string{host + "-" + port, host + "-" + port + "-2"} {
		args := []string{"run", "-n", "50", "-c", "2", "-t", "1", "--no-history", "--results-dir", parent, srv.URL}
		code, _, stderr := runCLI(t, args...)
		dir := filepath.Join(parent, name)
		if code != ExitOK || !strings.Contains(stderr, "apiperf: saved "+dir) {
			t.Fatalf("run %d: apiperf %q = exit %d, stderr %q; want 0 saving %s", i+1, args, code, stderr, dir)
		}
		b, err := os.ReadFile(filepath.Join(dir, "run.json"))
		if err != nil {
			t.Fatalf("run %d: %v", i+1, err)
		}
		doc, err := result.Decode("run.json", b)
		if err != nil || len(doc.Steps) != 1 || doc.Steps[0].Requests != 50 {
			t.Fatalf("run %d: %s/run.json decodes to %v, %v; want one step of 50 requests", i+1, dir, doc, err)
		}
		for _, f := range []string{"report.html", "bench.txt", name[:len(host+"-"+port)] + ".dat"} {
			if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
				t.Errorf("run %d: %s/%s: %v; want it written", i+1, dir, f, err)
			}
		}
	}
	if hits.Load() != 100 {
		t.Fatalf("the target saw %d requests, want 100", hits.Load())
	}
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, []byte("x"), 0o644)
	args := []string{"run", "-n", "50", "-c", "1", "-t", "1", "--no-history", "--results-dir", filepath.Join(file, "out"), srv.URL}
	if code, _, stderr := runCLI(t, args...); code != ExitUsage || hits.Load() != 100 {
		t.Errorf("apiperf %q = exit %d (%s), %d requests sent; want 2 before any request", args, code, stderr, hits.Load()-100)
	}
}
