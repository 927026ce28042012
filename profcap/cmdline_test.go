package profcap

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"os"
	"strings"
	"testing"
	"time"
)

// FetchCmdline reads net/http/pprof's real cmdline handler: this test binary's arguments.
func TestFetchCmdline(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	body, err := FetchCmdline(context.Background(), srv.URL+"/debug/pprof/", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(body), strings.Join(os.Args, "\x00"); got != want {
		t.Errorf("FetchCmdline = %q, want os.Args %q", got, want)
	}
	if _, err := FetchCmdline(context.Background(), srv.URL+"/nothing", time.Second); err == nil {
		t.Error("FetchCmdline of a path without the handler: no error")
	}
}
