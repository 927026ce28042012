package scenario

import (
	"strings"
	"testing"
)

func TestRedactURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		// A password in the user info is hidden, the user name kept.
		{"http://u:pw@h:1/p", "http://u:REDACTED@h:1/p"},
		// A bare user info is a token (https://TOKEN@host).
		{"https://tok@h/p", "https://REDACTED@h/p"},
		// Secret query values go, the others and their order stay, byte for byte.
		{"http://h/p?page=2&token=abc&x=%20y", "http://h/p?page=2&token=REDACTED&x=%20y"},
		// Names are compared without case; parts like _token or secret count too.
		{"http://h/?API_KEY=1&client_secret=2&id_token=3&sig=4", "http://h/?API_KEY=REDACTED&client_secret=REDACTED&id_token=REDACTED&sig=REDACTED"},
		// A path with a query, and the fragment kept.
		{"/p?password=x#frag", "/p?password=REDACTED#frag"},
		// Nothing secret: unchanged; a bare name without '=' unchanged.
		{"http://h:8080/a/b?q=1&token", "http://h:8080/a/b?q=1&token"},
		// Idempotent.
		{"http://u:REDACTED@h/?key=REDACTED", "http://u:REDACTED@h/?key=REDACTED"},
		// An URL that does not parse is still redacted.
		{"http://u:pw@h:bad port/?token=x", "http://u:REDACTED@h:bad port/?token=REDACTED"},
	} {
		if got := RedactURL(tc.in); got != tc.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := RedactURL("http://h/?mine=1&other=2", "MINE"); got != "http://h/?mine=REDACTED&other=2" {
		t.Errorf("RedactURL with --redact mine = %q", got)
	}
}

func TestRedactText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		// URLs inside a warning are redacted where they stand.
		{`metrics: http://h/m?token=x failed: "GET https://a:b@h/"`, `metrics: http://h/m?token=REDACTED failed: "GET https://a:REDACTED@h/"`},
		// A bare path with a query.
		{"GET /p?sig=1 (2 of 3)", "GET /p?sig=REDACTED (2 of 3)"},
		// A question without a URL is left alone.
		{"why? because", "why? because"},
		{"", ""},
	} {
		if got := RedactText(tc.in); got != tc.want {
			t.Errorf("RedactText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRedactArgs(t *testing.T) {
	in := []string{"-H", "Authorization: Bearer x", "-HCookie: c", "--header=X-Token: t", "-H", "Accept: a",
		"--body", "pw=1", "--body=pw=2", "http://u:p@h/?token=t"}
	want := []string{"-H", "Authorization: REDACTED", "-HCookie: REDACTED", "--header=X-Token: REDACTED", "-H", "Accept: a",
		"--body", "REDACTED", "--body=REDACTED", "http://u:REDACTED@h/?token=REDACTED"}
	if got := RedactArgs(in, nil, false); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("RedactArgs =\n%q\nwant\n%q", got, want)
	}
	if got := RedactArgs([]string{"--body", "a=1"}, nil, true); got[1] != "a=1" {
		t.Errorf("RedactArgs with keepBody hid the body: %q", got)
	}
}

func TestScenarioRedactBody(t *testing.T) {
	s := Scenario{URL: "http://h/", Body: "password=hunter2"}.Redact()
	if s.Body != "" || s.BodySize != 16 || len(s.BodySHA256) != 64 {
		t.Errorf("Redact() body = %q size %d hash %q; want no body, 16 bytes and a SHA-256", s.Body, s.BodySize, s.BodySHA256)
	}
	if again := s.Redact(); again.BodySize != 16 || again.BodySHA256 != s.BodySHA256 {
		t.Errorf("Redact() twice lost the body's size or hash: %+v", again)
	}
	if k := (Scenario{URL: "http://h/", Body: "b", KeepBody: true}).Redact(); k.Body != "b" {
		t.Errorf("KeepBody: body %q, want b", k.Body)
	}
}

// FuzzRedactText: the rule never panics, is idempotent, and leaves no value of a secret
// parameter it was shown.
func FuzzRedactText(f *testing.F) {
	for _, s := range []string{"http://u:p@h/?token=x", "GET /p?sig=1 (2 of 3)", "why? because", "a://?key=", "x?token=a&token=b#f", "http://h?=&&=?"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		once := RedactText(s)
		if twice := RedactText(once); twice != once {
			t.Errorf("RedactText not idempotent on %q: %q then %q", s, once, twice)
		}
		if strings.Contains(s, "?token=SECRET ") && strings.Contains(once, "token=SECRET ") {
			t.Errorf("RedactText(%q) = %q kept the token", s, once)
		}
	})
}

// TestRedactArgsSecretShapes: the one rule covers every shape a secret takes on a command
// line, apiperf's own or a target's.
func TestRedactArgsSecretShapes(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		// A header given to any flag, not only -H.
		{[]string{"-header", "Authorization: Bearer x"}, []string{"-header", "Authorization: REDACTED"}},
		{[]string{"--add-header=Cookie: c=1"}, []string{"--add-header=Cookie: REDACTED"}},
		// Credentials in a URL (a DSN); a DSN flag without a scheme is a secret as a whole.
		{[]string{"-dsn", "postgres://user:pass@127.0.0.1/db"}, []string{"-dsn", "REDACTED"}},
		{[]string{"--db=postgres://user:pass@127.0.0.1/db"}, []string{"--db=postgres://user:REDACTED@127.0.0.1/db"}},
		{[]string{"-mysql-dsn=user:pass@tcp(127.0.0.1:3306)/db"}, []string{"-mysql-dsn=REDACTED"}},
		// Flags whose names end in pass or auth (redis), or say password.
		{[]string{"-requirepass", "secret", "-masterauth", "s2"}, []string{"-requirepass", "REDACTED", "-masterauth", "REDACTED"}},
		{[]string{"--password=x", "--db-password", "y"}, []string{"--password=REDACTED", "--db-password", "REDACTED"}},
		// Environment-like assignments (env TOKEN=x svc).
		{[]string{"env", "TOKEN=abc", "DB_PASSWORD=p", "PORT=80", "svc"}, []string{"env", "TOKEN=REDACTED", "DB_PASSWORD=REDACTED", "PORT=80", "svc"}},
		// A file holding a secret is a path, not the secret; ordinary flags are kept.
		{[]string{"--token-file", "/run/token", "-port=8080", "-v"}, []string{"--token-file", "/run/token", "-port=8080", "-v"}},
	} {
		if got := RedactArgs(tc.in, nil, false); strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("RedactArgs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
