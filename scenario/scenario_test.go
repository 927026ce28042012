package scenario

import (
	"strings"
	"testing"
)

func TestParseTargetErrors(t *testing.T) {
	for _, tc := range []struct {
		url, want string
	}{
		{"127.0.0.1:8080/x", `URL "127.0.0.1:8080/x" has no scheme: did you mean http://127.0.0.1:8080/x ?`}, // Go's own error is about a colon in a path
		{"localhost:8080", `URL "localhost:8080" has no scheme: did you mean http://localhost:8080 ?`},       // url.Parse takes "localhost" for a scheme
		{"//127.0.0.1/x", `URL "//127.0.0.1/x" has no scheme: did you mean http://127.0.0.1/x ?`},            // protocol-relative
		{"ftp://127.0.0.1/", `unsupported scheme "ftp"`},
		{"http:///x", "has no host"},
		{"http://127.0.0.1:0/", `bad port "0"`},
	} {
		_, err := ParseTarget(tc.url)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseTarget(%q) = %v; want an error containing %q", tc.url, err, tc.want)
		}
	}
	if tg, err := ParseTarget("http://127.0.0.1:8080/x?y=1"); err != nil || tg.Address != "127.0.0.1:8080" || tg.Path != "/x?y=1" {
		t.Errorf("ParseTarget(http://127.0.0.1:8080/x?y=1) = %+v, %v; want address 127.0.0.1:8080, path /x?y=1", tg, err)
	}
}

// TestParseTargetGRPC: grpc:// is h2c and grpcs:// TLS to a /package.Service/Method path.
func TestParseTargetGRPC(t *testing.T) {
	for _, tc := range []struct {
		url, scheme, want string
	}{
		{"grpc://127.0.0.1:9090/pkg.Svc/Method", "http", ""},             // cleartext: h2c
		{"grpcs://[::1]:9443/pkg.Svc/Method", "https", ""},               // TLS: h2 by ALPN
		{"grpc://127.0.0.1:9090/pkg.Svc", "", "/package.Service/Method"}, // no method
		{"grpc://127.0.0.1:9090/pkg.Svc/M/x", "", "/package.Service/Method"},
		{"grpc://127.0.0.1:9090/pkg.Svc/M?x=1", "", "/package.Service/Method"}, // a call has no query
	} {
		tg, err := ParseTarget(tc.url)
		if tc.want != "" {
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseTarget(%q) = %v; want an error naming %q", tc.url, err, tc.want)
			}
			continue
		}
		if err != nil || !tg.GRPC || tg.Scheme != tc.scheme || !strings.HasSuffix(tg.Path, "/pkg.Svc/Method") {
			t.Errorf("ParseTarget(%q) = %+v, %v; want a gRPC target over %s", tc.url, tg, err, tc.scheme)
		}
	}
}
