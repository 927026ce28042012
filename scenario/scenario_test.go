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
