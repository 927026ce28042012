package profcap

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/apiperf/apiperf/internal/testenv"
)

// Finding 7 of issue 12: a pprof or metrics endpoint that answers without end is read up
// to a limit, and the warning says the limit.
func TestEndpointLimits(t *testing.T) {
	line := []byte("# padding " + strings.Repeat("x", 1000) + "\n")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// 2x the larger limit, written until the client stops reading.
		for n := 0; n < 2*MaxProfileBytes; n += len(line) {
			if _, err := w.Write(line); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	if _, err := scrape(ctx, srv.Client(), srv.URL+"/metrics"); err == nil || !strings.Contains(err.Error(), "larger than the 8 MiB limit") {
		t.Errorf("scrape of an endless page = %v; want the 8 MiB limit named", err)
	}
	if _, err := fetch(ctx, srv.Client(), srv.URL+"/debug/pprof/heap"); err == nil || !strings.Contains(err.Error(), "larger than the 16 MiB limit") {
		t.Errorf("fetch of an endless profile = %v; want the 16 MiB limit named", err)
	}
}

// TestProfileGzipBomb: a profile served as gzip members that expand to 8 times the
// uncompressed limit is refused at the limit with one warning, without holding the rest
// (2 MB expanding to 2 GB took 9.5 GB and killed the run).
func TestProfileGzipBomb(t *testing.T) {
	b := testenv.GzipBomb(8*MaxProfileUncompressed>>20, 1<<20) // 8 times the limit, in 1 MiB members
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(b)
	}))
	defer srv.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, warns := Capture(context.Background(), Request{Base: srv.URL + "/debug/pprof", Heap: true}, srv.Client())
	runtime.ReadMemStats(&after)
	if len(warns) != 1 || !strings.Contains(warns[0], "uncompressed") || !strings.Contains(warns[0], "limit") {
		t.Errorf("Capture of a %d KB gzip bomb warned %q; want one warning naming the uncompressed limit", len(b)>>10, warns)
	}
	// Reading up to the limit allocates a few times it (more under -race); the whole bomb, 8.
	if got := after.TotalAlloc - before.TotalAlloc; got > 6*MaxProfileUncompressed {
		t.Errorf("Capture of a gzip bomb of %d MiB allocated %d MiB, want a few times the %d MiB limit", 8*MaxProfileUncompressed>>20, got>>20, MaxProfileUncompressed>>20)
	}
}
