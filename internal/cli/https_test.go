package cli

import (
	"strings"
	"testing"

	"github.com/apiperf/apiperf/target"
)

// TestRunHTTPS: `run -k https://...` over HTTP/1.1 (the event loops on Linux), closed and open
// loop, against the built-in target's TLS listener.
func TestRunHTTPS(t *testing.T) {
	srv, err := target.Start(target.Config{TLS: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for _, extra := range [][]string{nil, {"-R", "2000"}} {
		args := append([]string{"run", "--no-history", "-k", "-t", "2", "-c", "4", "-n", "500"}, extra...)
		code, out, errOut := runCLI(t, append(args, srv.URL()+"/healthz")...)
		for _, want := range []string{"500 requests in", "Status codes: 200=500", "Errors: connect 0, read 0, write 0, timeout 0, status 0, protocol 0"} {
			if !strings.Contains(out, want) {
				t.Errorf("run %v %s: exit %d, output lacks %q:\n%s\n%s", extra, srv.URL(), code, want, out, errOut)
			}
		}
	}
}
