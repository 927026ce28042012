package cli

import (
	"strings"
	"testing"

	"github.com/apiperf/apiperf/target"
)

// The README's HTTP/2 examples: the built-in target answers h2c, and h2 with --tls.
func TestRunHTTP2(t *testing.T) {
	for _, tls := range []bool{false, true} {
		srv, err := target.Start(target.Config{TLS: tls})
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		code, out, errOut := runCLI(t, "run", "--no-history", "-k", "--http2", "--streams", "10", "-c", "4", "-n", "2000", srv.URL()+"/healthz")
		proto := "h2c"
		if tls {
			proto = "h2"
		}
		for _, want := range []string{"threads and 4 connections (HTTP/2, 10 streams each)", "2000 requests in", "Status codes: 200=2000",
			"Protocol: HTTP/2 (" + proto + "), 10 streams per connection"} {
			if !strings.Contains(out, want) {
				t.Errorf("run --http2 %s: exit %d, output lacks %q:\n%s\n%s", srv.URL(), code, want, out, errOut)
			}
		}
	}
	code, _, errOut := runCLI(t, "run", "--no-history", "--streams", "10", "-n", "10", "http://127.0.0.1:1/")
	if code != ExitUsage || !strings.Contains(errOut, "--streams 10 needs --http2") {
		t.Errorf("--streams without --http2: exit %d, stderr %q; want usage error naming --http2", code, errOut)
	}
}
