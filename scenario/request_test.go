package scenario

import (
	"bufio"
	"bytes"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// parseRaw reads a raw request the way a server would.
func parseRaw(t *testing.T, raw []byte) (*http.Request, string) {
	t.Helper()
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
	if err != nil {
		t.Fatalf("a server cannot read %q: %v", raw, err)
	}
	body, _ := io.ReadAll(req.Body)
	return req, string(body)
}

func TestParseHeader(t *testing.T) {
	cases := []struct {
		in         string
		name, val  string
		err        bool
		whyComment string
	}{
		{"Accept: text/plain", "Accept", "text/plain", false, "wrk's form"},
		{"X-A:b", "X-A", "b", false, "no space after the colon is fine"},
		{"  X-Pad  :   v  ", "X-Pad", "v", false, "spaces around name and value are trimmed"},
		{"X-Colons: a:b:c", "X-Colons", "a:b:c", false, "only the first colon splits"},
		{"X-Empty:", "X-Empty", "", false, "an empty value is allowed"},
		{"NoColon", "", "", true, "no colon"},
		{": v", "", "", true, "no name"},
		{"Bad Name: v", "", "", true, "a space in the name"},
		{"X-Split: a\r\nInjected: yes", "", "", true, "a line break would inject a header"},
	}
	for _, c := range cases {
		h, err := ParseHeader(c.in)
		if (err != nil) != c.err || (!c.err && (h.Name != c.name || h.Value != c.val)) {
			t.Errorf("ParseHeader(%q) = %+v, %v; want %q: %q (error %v): %s", c.in, h, err, c.name, c.val, c.err, c.whyComment)
		}
	}
}

func TestScenarioValidate(t *testing.T) {
	good := Scenario{URL: "http://127.0.0.1:8080/", Method: "post", Body: "abc", Headers: []Header{{"Content-Length", "3"}}}
	if err := good.Validate(); err != nil {
		t.Errorf("Validate(%+v) = %v", good, err)
	}
	bad := Scenario{URL: "nope", Method: "GE T", Body: "abc",
		Headers: []Header{{"Content-Length", "5"}, {"Bad Name", "x"}}}
	err := bad.Validate()
	for _, want := range []string{"has no scheme", `bad method "GE T"`, "malformed header", "contradicts the body of 3 bytes"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate of a bad scenario = %v, want every problem at once, with %q", err, want)
		}
	}
}

func TestCheckLength(t *testing.T) {
	cases := []struct {
		headers []Header
		body    string
		ok      bool
		why     string
	}{
		{nil, "abc", true, "no length header: apiperf sets it"},
		{[]Header{{"content-length", "3"}}, "abc", true, "a matching length, any case"},
		{[]Header{{"Content-Length", "4"}}, "abc", false, "a length the body does not have"},
		{[]Header{{"Content-Length", "-1"}}, "", false, "not a byte count"},
		{[]Header{{"Transfer-Encoding", "chunked"}}, "3\r\nabc\r\n0\r\n\r\n", true, "a body that is chunked"},
		{[]Header{{"Transfer-Encoding", "chunked"}}, "abc", false, "chunked header over a plain body"},
	}
	for _, c := range cases {
		if err := checkLength(c.headers, c.body); (err == nil) != c.ok {
			t.Errorf("checkLength(%v, %q) = %v: %s", c.headers, c.body, err, c.why)
		}
	}
}

// Format builds requests a real HTTP server reads back as meant: Host and User-Agent
// added unless given, Content-Length set for a body unless the caller set a length.
func TestFormatIsReadByAServer(t *testing.T) {
	cases := []struct {
		name    string
		method  string
		headers []Header
		body    string
		check   func(r *http.Request, body string) bool
	}{
		{"a plain GET gets Host and User-Agent", "GET", nil, "", func(r *http.Request, body string) bool {
			return r.Host == "example:8080" && r.UserAgent() == UserAgent && r.ContentLength == 0
		}},
		{"the caller's Host and User-Agent win", "GET", []Header{{"Host", "other"}, {"user-agent", "me"}}, "", func(r *http.Request, body string) bool {
			return r.Host == "other" && r.UserAgent() == "me"
		}},
		{"a body gets its Content-Length", "POST", []Header{{"Content-Type", "text/plain"}}, "hello", func(r *http.Request, body string) bool {
			return r.ContentLength == 5 && body == "hello" && r.Header.Get("Content-Type") == "text/plain"
		}},
		{"a chunked body is left alone", "PUT", []Header{{"Transfer-Encoding", "chunked"}}, "5\r\nhello\r\n0\r\n\r\n", func(r *http.Request, body string) bool {
			return body == "hello" && r.ContentLength == -1
		}},
	}
	for _, c := range cases {
		raw := Format(c.method, "/p?q=1", "example:8080", c.headers, []byte(c.body))
		r, body := parseRaw(t, raw)
		if r.Method != c.method || r.URL.RequestURI() != "/p?q=1" || !c.check(r, body) {
			t.Errorf("%s: Format gave %q", c.name, raw)
		}
	}
}

func TestStaticSource(t *testing.T) {
	st, err := NewStatic(Scenario{URL: "http://127.0.0.1:9/x", Method: "head"})
	if err != nil {
		t.Fatal(err)
	}
	rq, _ := st.Requester(1, 7)
	raw, n, ep, head := rq.Request()
	if n != 1 || ep != 0 || !head || !bytes.HasPrefix(raw, []byte("HEAD /x HTTP/1.1\r\n")) || !bytes.Equal(raw, st.Bytes()) {
		t.Errorf("Request() = %q, %d, %d, %v; want one HEAD /x", raw, n, ep, head)
	}
	if st.Endpoints() != nil {
		t.Errorf("Endpoints() = %v, want nil for one request", st.Endpoints())
	}
	if _, err := NewStatic(Scenario{URL: "ftp://x/"}); err == nil {
		t.Error("NewStatic of a bad URL: no error")
	}
	if s := (Scenario{URL: "http://h/", Method: "delete"}).String(); s != "DELETE http://h/" {
		t.Errorf("String() = %q", s)
	}
}

// The schedule spreads an endpoint's share over the iteration instead of sending it in a
// run: the smooth weighted round-robin order.
func TestSchedule(t *testing.T) {
	cases := []struct {
		weights []int
		want    string // endpoint letters of one iteration
	}{
		{[]int{1}, "a"},
		{[]int{2, 4}, "bab"},        // reduced by the gcd: 1:2
		{[]int{5, 1, 1}, "aabacaa"}, // the heavy one spread around the light ones
		{[]int{3, 0, 1}, "aaca"},    // weight 0 never appears
		{[]int{0, 0}, ""},           // nothing to send
	}
	for _, c := range cases {
		var eps []Endpoint
		for _, w := range c.weights {
			eps = append(eps, Endpoint{Weight: w})
		}
		var got strings.Builder
		for _, i := range schedule(eps) {
			got.WriteByte('a' + i)
		}
		if got.String() != c.want {
			t.Errorf("schedule(weights %v) = %q, want %q", c.weights, got.String(), c.want)
		}
	}
}

func TestTemplatePlaceholders(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "words.txt"), []byte("one\n\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		src   string
		check func(outs []string) bool
	}{
		{"plain", func(o []string) bool { return o[0] == "plain" && o[2] == "plain" }},
		{"n={{counter}}", func(o []string) bool { return o[0] == "n=1" && o[1] == "n=2" && o[2] == "n=3" }},
		{"{{counter 100}}", func(o []string) bool { return o[0] == "100" && o[2] == "102" }},
		{"{{random 7 7}}", func(o []string) bool { return o[0] == "7" && o[1] == "7" }},
		{"{{choice x}}", func(o []string) bool { return o[0] == "x" }},
		{"{{line words.txt}}", func(o []string) bool { return o[0] == "one" && o[1] == "two" && o[2] == "one" }}, // blank lines skipped, wraps
		{"{{uuid}}", func(o []string) bool {
			u := o[0]
			return len(u) == 36 && u[14] == '4' && strings.Count(u, "-") == 4 && o[1] != u
		}},
	}
	for _, c := range cases {
		tp, err := parseTemplate(c.src, dir)
		if err != nil {
			t.Errorf("parseTemplate(%q): %v", c.src, err)
			continue
		}
		var outs []string
		for range 3 {
			outs = append(outs, string(tp.render(r, nil)))
		}
		if !c.check(outs) {
			t.Errorf("template %q rendered %q", c.src, outs)
		}
		if tp.static() != !strings.Contains(c.src, "{{") {
			t.Errorf("template %q: static() = %v", c.src, tp.static())
		}
	}
	for _, bad := range []string{"{{counter", "{{nope}}", "{{random 5 1}}", "{{random a b}}", "{{choice}}", "{{line missing.txt}}", "{{counter x}}"} {
		if _, err := parseTemplate(bad, dir); err == nil {
			t.Errorf("parseTemplate(%q): no error", bad)
		}
	}
}

// A mix's requests, templated or not, are read by a server as meant; each connection starts
// at its own place in the schedule and cycles through it.
func TestMixSourceRequests(t *testing.T) {
	m, err := DecodeMix("m.yaml", []byte(`headers:
  Accept: application/json
endpoints:
  - name: list
    path: /items
    weight: 2
  - name: create
    method: POST
    path: /items/{{counter}}
    body: '{"n":{{counter 5}}}'
    weight: 1
  - name: peek
    method: HEAD
    url: http://127.0.0.1:9/peek
    weight: 1
`))
	if err != nil {
		t.Fatal(err)
	}
	src, err := m.Source(Scenario{URL: "http://127.0.0.1:9/", Headers: []Header{{"Accept", "text/plain"}, {"X-Run", "1"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(src.Endpoints(), ","); got != "list,create,peek" || src.IterationSize() != 4 {
		t.Errorf("endpoints %q, iteration %d; want list,create,peek and 4", got, src.IterationSize())
	}
	rq, _ := src.Requester(0, 0)
	seen := map[string]int{}
	for range 8 {
		raw, n, ep, head := rq.Request()
		r, body := parseRaw(t, raw)
		seen[src.Endpoints()[ep]]++
		if n != 1 || head != (r.Method == "HEAD") {
			t.Errorf("Request() n %d head %v for %s", n, head, r.Method)
		}
		if r.Header.Get("Accept") != "application/json" || r.Header.Get("X-Run") != "1" {
			t.Errorf("headers %v: the mix's Accept must win over the run's, the run's others apply", r.Header)
		}
		if r.Method == "POST" && (!strings.HasPrefix(r.URL.Path, "/items/") || !strings.HasPrefix(body, `{"n":`) || r.ContentLength != int64(len(body))) {
			t.Errorf("templated POST %s %q, length %d", r.URL.Path, body, r.ContentLength)
		}
	}
	if seen["list"] != 4 || seen["create"] != 2 || seen["peek"] != 2 {
		t.Errorf("two iterations sent %v, want list 4, create 2, peek 2", seen)
	}
	a, _ := src.Requester(0, 1)
	b, _ := src.Requester(0, 2)
	_, _, epA, _ := a.Request()
	_, _, epB, _ := b.Request()
	_, _, ep0, _ := rq.Request()
	if epA == ep0 && epB == ep0 {
		t.Error("every connection starts at the same endpoint")
	}

	other, _ := DecodeMix("o.yaml", []byte("- url: http://127.0.0.2:9/x\n"))
	if _, err := other.Source(Scenario{URL: "http://127.0.0.1:9/"}); err == nil || !strings.Contains(err.Error(), "one run loads one host") {
		t.Errorf("a mix endpoint on another host: %v, want a refusal", err)
	}
}

// Validate reports each problem of a mix with its line, all at once.
func TestMixValidate(t *testing.T) {
	m := &Mix{File: "m.yaml", Endpoints: []Endpoint{
		{Name: "a", Path: "/a", Weight: 1, Line: 2},
		{Name: "a", Path: "/b", Weight: 1, Line: 4},                             // named twice
		{Path: "nope", Weight: 1, Line: 6},                                      // no leading slash
		{Path: "/c", URL: "http://h/c", Weight: 1, Line: 8},                     // both
		{Weight: 1, Line: 10},                                                   // neither
		{Path: "/d", Method: "G T", Weight: 0, Line: 12},                        // bad method, no weight
		{Path: "/e", Body: "x", BodyFile: "f", Weight: 1, Line: 14},             // both bodies
		{Path: "/f/{{random 9 1}}", Weight: 1, Line: 16},                        // bad template
		{Path: "/g", Headers: []Header{{"Bad Name", "v"}}, Weight: 1, Line: 18}, // bad header
	}}
	err := m.Validate()
	for _, want := range []string{
		`m.yaml:4: endpoint "a" is named twice (first at line 2)`, `m.yaml:6: path "nope" must start with /`,
		"m.yaml:8: give path or url, not both", "m.yaml:10: give path or url", `m.yaml:12: bad method "G T"`,
		"m.yaml:12: weight 0", "m.yaml:14: give body or body_file, not both", "m.yaml:16:", "m.yaml:18: malformed header",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v\nwant it to report %q", err, want)
		}
	}
	if err := (&Mix{File: "e.yaml"}).Validate(); err == nil || !strings.Contains(err.Error(), "e.yaml:1: no endpoints") {
		t.Errorf("Validate of an empty mix = %v", err)
	}
}

// A saved mix keeps no secret: headers, query parameters and (unless kept) bodies.
func TestMixRedact(t *testing.T) {
	m := &Mix{Endpoints: []Endpoint{{Name: "login", Path: "/login?token=abc", Body: "pw=hunter2",
		Headers: []Header{{"Authorization", "Bearer x"}, {"Accept", "a"}}, Weight: 1}}}
	r := m.redact(nil, false)
	e := r.Endpoints[0]
	if strings.Contains(e.Path, "abc") || strings.Contains(e.Body, "hunter2") || e.Headers[0].Value == "Bearer x" || e.Headers[1].Value != "a" {
		t.Errorf("redacted endpoint %+v", e)
	}
	if m.Endpoints[0].Body != "pw=hunter2" {
		t.Error("redact changed the mix it was given")
	}
	if kept := m.redact(nil, true); kept.Endpoints[0].Body != "pw=hunter2" {
		t.Errorf("--keep-body: body %q, want it kept", kept.Endpoints[0].Body)
	}
	if got := (Endpoint{Method: "post", Path: "/x"}).Label(); got != "POST /x" {
		t.Errorf("Label() = %q, want POST /x", got)
	}
	if got := (Endpoint{URL: "http://h/y"}).Label(); got != "GET http://h/y" {
		t.Errorf("Label() = %q", got)
	}
}
