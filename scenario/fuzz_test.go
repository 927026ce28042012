package scenario

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// ParseTarget never panics, and what it accepts is dialable and sendable.
func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:8080/x?y=1", "https://[::1]/", "http://h", "localhost:80", "http://h:0/", "http://u:p@h/%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tg, err := ParseTarget(s)
		if err != nil {
			if strings.Contains(err.Error(), "token=") && strings.Contains(s, "token=") {
				t.Errorf("error %q shows a secret of %q", err, s)
			}
			return
		}
		if tg.Address == "" || tg.Host == "" || !strings.HasPrefix(tg.Path, "/") || (tg.Scheme != "http" && tg.Scheme != "https") {
			t.Errorf("ParseTarget(%q) = %+v", s, tg)
		}
		if strings.ContainsAny(tg.Path, " \r\n") {
			t.Errorf("ParseTarget(%q): path %q would break the request line", s, tg.Path)
		}
	})
}

// A header ParseHeader accepts cannot inject another header or break the request.
func FuzzParseHeader(f *testing.F) {
	for _, s := range []string{"A: b", "X:y", "Bad Name: v", "A: b\r\nC: d", ": v"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := ParseHeader(s)
		if err != nil {
			return
		}
		if h.Name == "" || strings.ContainsAny(h.Name+h.Value, "\r\n") || strings.ContainsAny(h.Name, " :") {
			t.Errorf("ParseHeader(%q) = %+v", s, h)
		}
		raw := Format("GET", "/", "h", []Header{h}, nil)
		if n := strings.Count(string(raw), "\r\n"); n != 5 { // request line, Host, User-Agent (unless given), the header, the end
			if !strings.EqualFold(h.Name, "host") && !strings.EqualFold(h.Name, "user-agent") {
				t.Errorf("header %+v made %d lines: %q", h, n, raw)
			}
		}
	})
}

// A template either fails to compile or renders without panicking, the same way each time
// for a fixed seed when it has no shared counters or files.
func FuzzTemplate(f *testing.F) {
	for _, s := range []string{"x{{counter}}", "{{random 1 9}}", "{{choice a b}}", "{{uuid}}", "{{", "}}{{", "{{random 9 1}}"} {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, s string) {
		tp, err := parseTemplate(s, dir)
		if err != nil {
			return
		}
		r := rand.New(rand.NewPCG(1, 1))
		out := tp.render(r, nil)
		if tp.static() && string(out) != s {
			t.Errorf("static template %q rendered %q", s, out)
		}
	})
}
