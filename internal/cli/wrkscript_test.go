package cli

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 19: a script's setup and init output comes before wrk's header, and the line on
// stderr says what is sent (post.lua sends POST), before the header.
func TestScriptSetupBeforeHeaderAndBanner(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, r.Method)
	}))
	defer srv.Close()
	script := filepath.Join(t.TempDir(), "setup_post.lua")
	code := `
local counter = 1
function setup(thread) thread:set("id", counter); counter = counter + 1 end
function init(args) print(string.format("thread %d created", id)) end
wrk.method = "POST"
wrk.body = "a=1"
`
	if err := os.WriteFile(script, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	exit, stdout, stderr := runCLI(t, "run", "-t2", "-c4", "-d300ms", "-s", script, srv.URL+"/")
	if exit != ExitOK {
		t.Fatalf("apiperf run -s = exit %d, stderr %s", exit, stderr)
	}
	if want := "thread 1 created\nthread 2 created\nRunning "; !strings.HasPrefix(stdout, want) {
		t.Errorf("stdout starts %q, want %q: every thread's setup and init before wrk's header", stdout[:min(len(stdout), 80)], want)
	}
	if want := "apiperf: POST " + srv.URL + "/ (from " + script + ")"; !strings.Contains(stderr, want) {
		t.Errorf("stderr %q, want the banner %q", stderr, want)
	}
}
