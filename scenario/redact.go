package scenario

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
)

// The redaction rule, applied to everything apiperf writes (stdout, stderr, run.json and its
// command, report.html, chart titles, bench.txt, file names, the history database):
//   - a URL's user info: "user:pass@" becomes "user:REDACTED@", a bare "token@" "REDACTED@";
//   - the values of query parameters whose names look secret (SecretParams, names containing
//     one of secretParamParts, and the names given with --redact);
//   - the values of secret headers (IsSecret);
//   - on a command line (apiperf's own, or a target's from its pprof cmdline), the same
//     rule: the value of every argument that is a secret header ("Authorization: Bearer x",
//     alone or after any flag's "="), of flags and environment-like NAME=value assignments
//     whose names look secret (IsSecretParam: -requirepass x, --password=x, TOKEN=x,
//     -dsn x), and every URL (RedactArgs);
//   - the request body: stored as its length and SHA-256 unless --keep-body.

// Redacted is the text that replaces secrets in saved files and reports.
const Redacted = "REDACTED"

// SecretParams are the query parameter names (compared without case) whose values are always
// redacted.
var SecretParams = []string{"token", "access_token", "api_key", "apikey", "key", "password",
	"passwd", "secret", "signature", "sig", "auth", "session"}

// secretParamParts make a parameter secret wherever they appear in its name
// (client_secret, id_token, x-api-key, db-password, private_key); secretParamEnds where its
// name ends with them (requirepass, masterauth, mysql-dsn).
var (
	secretParamParts = []string{"token", "secret", "passw", "api_key", "api-key", "apikey", "signature",
		"credential", "private_key", "private-key", "privatekey"}
	secretParamEnds = []string{"pass", "auth", "dsn"}
)

// fileParamEnds name where a secret is kept, not the secret: --token-file /run/token.
var fileParamEnds = []string{"file", "path", "dir"}

// IsSecret reports whether a header carries a credential (Authorization, Cookie, tokens, keys).
func IsSecret(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "authorization", "proxy-authorization", "cookie", "set-cookie":
		return true
	}
	for _, w := range []string{"token", "secret", "api-key", "apikey", "password", "session", "auth"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// IsSecretParam reports whether a query parameter carries a credential; extra are more
// names to redact (--redact).
func IsSecretParam(name string, extra []string) bool {
	if u, err := url.QueryUnescape(name); err == nil {
		name = u
	}
	n := strings.ToLower(name)
	for _, s := range SecretParams {
		if n == s {
			return true
		}
	}
	for _, s := range extra {
		if strings.EqualFold(n, s) {
			return true
		}
	}
	for _, p := range fileParamEnds {
		if strings.HasSuffix(n, p) {
			return false
		}
	}
	for _, p := range secretParamParts {
		if strings.Contains(n, p) {
			return true
		}
	}
	for _, p := range secretParamEnds {
		if strings.HasSuffix(n, p) {
			return true
		}
	}
	return false
}

// RedactURL applies the rule to a URL or a path with a query: user info and secret query
// values are replaced; everything else is kept byte for byte (it need not parse).
func RedactURL(raw string, extra ...string) string {
	rest, frag, hasFrag := strings.Cut(raw, "#")
	var b strings.Builder
	if i := strings.Index(rest, "://"); i >= 0 {
		b.WriteString(rest[:i+3])
		rest = rest[i+3:]
		end := strings.IndexAny(rest, "/?")
		if end < 0 {
			end = len(rest)
		}
		auth := rest[:end]
		if at := strings.LastIndexByte(auth, '@'); at >= 0 {
			user, _, hasPass := strings.Cut(auth[:at], ":")
			if hasPass {
				b.WriteString(user + ":" + Redacted + "@")
			} else {
				b.WriteString(Redacted + "@")
			}
			auth = auth[at+1:]
		}
		b.WriteString(auth)
		rest = rest[end:]
	}
	path, query, hasQuery := strings.Cut(rest, "?")
	b.WriteString(path)
	if hasQuery {
		b.WriteByte('?')
		b.WriteString(redactQuery(query, extra))
	}
	if hasFrag {
		b.WriteByte('#')
		b.WriteString(frag)
	}
	return b.String()
}

// redactQuery replaces the values of secret parameters in a raw query string.
func redactQuery(q string, extra []string) string {
	parts := strings.Split(q, "&")
	for i, p := range parts {
		name, _, ok := strings.Cut(p, "=")
		if ok && IsSecretParam(name, extra) {
			parts[i] = name + "=" + Redacted
		}
	}
	return strings.Join(parts, "&")
}

// RedactText applies the rule to every URL in free text (warnings, labels, error messages):
// a URL runs from its scheme to the next space or quote.
func RedactText(s string, extra ...string) string {
	if !strings.Contains(s, "://") && !strings.Contains(s, "?") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		q := strings.IndexByte(s, '?')
		if i < 0 && q < 0 {
			b.WriteString(s)
			return b.String()
		}
		start := i
		if i >= 0 {
			for start > 0 && isSchemeByte(s[start-1]) {
				start--
			}
		} else {
			// A bare path with a query ("/p?token=x"): from the start of the word.
			start = strings.LastIndexAny(s[:q], " \t\n\"'`(<=") + 1
		}
		end := start + strings.IndexAny(s[start:], " \t\n\"'`)<>")
		if end < start {
			end = len(s)
		}
		if end <= max(i, q) {
			// The '?' or "://" ends a word with nothing after it: keep it as it is.
			end = max(i, q) + 1
			b.WriteString(s[:end])
			s = s[end:]
			continue
		}
		b.WriteString(s[:start])
		b.WriteString(RedactURL(s[start:end], extra...))
		s = s[end:]
	}
}

func isSchemeByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'
}

// RedactHeaders returns headers with the values of secrets replaced.
func RedactHeaders(hs []Header) []Header {
	if hs == nil {
		return nil
	}
	out := make([]Header, len(hs))
	for i, h := range hs {
		if IsSecret(h.Name) {
			h.Value = Redacted
		}
		out[i] = h
	}
	return out
}

// BodyDigest is how a redacted body is shown: its length and the start of its SHA-256.
func BodyDigest(body string) string {
	sum := sha256.Sum256([]byte(body))
	return fmt.Sprintf("%s (%d bytes, sha256 %s)", Redacted, len(body), hex.EncodeToString(sum[:8]))
}

// Redact returns the scenario as it may be saved: the rule applied to its URL, headers and
// body (and to every endpoint of its mix). It is idempotent.
func (s Scenario) Redact() Scenario {
	s.Headers = RedactHeaders(s.Headers)
	s.URL = RedactURL(s.URL, s.SecretParams...)
	if s.Body != "" && !s.KeepBody {
		s.BodySize, s.BodySHA256 = len(s.Body), bodyHash(s.Body)
		s.Body = ""
	}
	if s.Mix != nil {
		s.Mix = s.Mix.redact(s.SecretParams, s.KeepBody)
	}
	return s
}

func bodyHash(body string) string {
	sum := sha256.Sum256([]byte(body))
	return hex.EncodeToString(sum[:])
}

// RedactArgs applies the rule to a command line, apiperf's or a target's: every URL; secret
// header values, whatever flag they follow (-H, --header, -header) or none; the values of
// flags and NAME=value assignments whose names look secret (IsSecretParam, with extra, the
// --redact names); the --body value (unless keepBody).
func RedactArgs(args []string, extra []string, keepBody bool) []string {
	out := make([]string, len(args))
	secretNext, bodyNext := false, false
	for i, a := range args {
		out[i] = RedactText(a, extra...)
		isFlag := strings.HasPrefix(a, "-") && len(a) > 1
		switch {
		case secretNext && !isFlag, bodyNext && !keepBody:
			out[i] = Redacted
		case isFlag:
			out[i] = redactFlag(a, out[i], extra, keepBody)
		default:
			out[i] = redactValue("", a, out[i], extra)
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		secretNext = isFlag && !hasValue && IsSecretParam(name, extra)
		bodyNext = isFlag && !hasValue && name == "body"
	}
	return out
}

// redactFlag is the rule for one flag argument a (-name=value, or wrk's -HName: value),
// whose URLs are redacted in urls.
func redactFlag(a, urls string, extra []string, keepBody bool) string {
	if strings.HasPrefix(a, "-H") && len(a) > 2 && a[2] != '=' {
		return redactValue("-H", a[2:], urls, extra)
	}
	name, value, ok := strings.Cut(strings.TrimLeft(a, "-"), "=")
	if !ok {
		return urls
	}
	prefix := a[:len(a)-len(value)]
	switch {
	case name == "body":
		if keepBody {
			return urls
		}
		return prefix + Redacted
	case IsSecretParam(name, extra):
		return prefix + Redacted
	}
	return redactValue(prefix, value, urls, extra)
}

// redactValue is the rule for a value v (after prefix, or alone), whose URLs are redacted
// in urls: a secret header's value, or a NAME=value whose name looks secret, is redacted.
func redactValue(prefix, v, urls string, extra []string) string {
	if h, err := ParseHeader(v); err == nil && IsSecret(h.Name) && !strings.Contains(v, "://") {
		return prefix + h.Name + ": " + Redacted
	}
	if name, _, ok := strings.Cut(v, "="); ok && isEnvName(name) && IsSecretParam(name, extra) {
		return prefix + name + "=" + Redacted
	}
	return urls
}

// isEnvName reports whether s is an environment variable's name.
func isEnvName(s string) bool {
	for i, c := range s {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}
