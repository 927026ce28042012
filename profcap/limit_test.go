package profcap

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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
