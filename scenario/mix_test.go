package scenario_test

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
)

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Every problem of a file is reported at once, each as file:line: problem.
func TestMixErrors(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "bad.yaml", `endpoints:
  - path: /a
    weight: 0
  - method: "GET POST"
    path: nope
  - path: /c
    body: x
    body_file: missing.json
    bogus: 1
  - path: /d?id={{random 5}}
  - url: http://10.0.0.1:80/x
`)
	_, err := scenario.LoadMix(p)
	if err == nil {
		t.Fatal("LoadMix of a bad file: no error")
	}
	// The unknown key does not hide the other problems: LoadMix reports them all at once.
	for _, want := range []string{
		p + ":9: unknown key \"bogus\"",
		p + ":4: bad method",
		p + ":10: template {{random 5}}: want {{random MIN MAX}}", // line 10 with the bogus line in
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	// The decoder stops at unknown keys; Validate then reports the rest, all at once.
	m, derr := scenario.DecodeMix(p, []byte(strings.Replace(mustRead(t, p), "    bogus: 1\n", "", 1)))
	if derr != nil {
		t.Fatalf("DecodeMix: %v", derr)
	}
	verr := m.Validate()
	for _, want := range []string{
		p + ":2: weight 0: want 1 or more",
		p + ":4: bad method",
		p + ":4: path \"nope\" must start with /",
		p + ":6: give body or body_file, not both",
		p + ":6: body_file:",
		p + ":9: template {{random 5}}: want {{random MIN MAX}}",
	} {
		if verr == nil || !strings.Contains(verr.Error(), want) {
			t.Errorf("Validate error lacks %q:\n%v", want, verr)
		}
	}
	// A URL to another host is refused when the source is built.
	foreign := &scenario.Mix{File: "f.yaml", Endpoints: []scenario.Endpoint{{URL: "http://10.0.0.1:80/x", Weight: 1, Line: 3}}}
	if _, err := foreign.Source(scenario.Scenario{URL: "http://127.0.0.1:9/"}); err == nil || !strings.Contains(err.Error(), "one run loads one host") {
		t.Errorf("Source with a foreign url: error %v, want one naming the host", err)
	}
}

func mustRead(t *testing.T, p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A YAML syntax error carries its line.
func TestMixSyntaxError(t *testing.T) {
	_, err := scenario.DecodeMix("s.yaml", []byte("endpoints:\n  - path: /a\n   weight: [\n"))
	if err == nil || !regexp.MustCompile(`^s\.yaml:\d+: `).MatchString(err.Error()) {
		t.Errorf("DecodeMix of broken YAML: %v, want s.yaml:LINE: ...", err)
	}
}

// Weights are respected: over a fixed count of whole iterations the shares are exact
// within one iteration per connection, and per-endpoint numbers add up to the totals.
func TestMixWeights(t *testing.T) {
	var mu sync.Mutex
	got := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		got[r.Method+" "+r.URL.Path]++
		mu.Unlock()
		if r.URL.Path == "/gone" {
			w.WriteHeader(404)
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	p := writeFile(t, dir, "mix.json", `{"headers": {"Accept": "application/json"},
 "endpoints": [
  {"name": "list", "path": "/items", "weight": 6},
  {"name": "create", "method": "POST", "path": "/items", "body": "{\"n\":{{counter}}}", "weight": 3},
  {"path": "/gone", "weight": 1}
 ]}`)
	m, err := scenario.LoadMix(p)
	if err != nil {
		t.Fatal(err)
	}
	if m.IterationSize() != 10 {
		t.Errorf("IterationSize = %d, want 10", m.IterationSize())
	}
	src, err := m.Source(scenario.Scenario{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	target, _ := scenario.ParseTarget(srv.URL)
	const conns, total = 4, 1000
	cfg := load.Config{Connections: conns, Threads: 2, Requests: total, Timeout: measure.Duration(2 * time.Second)}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	step, err := load.Run(ctx, cfg, src, target)
	if err != nil {
		t.Fatal(err)
	}
	// Each connection sends 250 = 25 iterations: exact shares.
	want := map[string]int{"GET /items": 600, "POST /items": 300, "GET /gone": 100}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("server saw %s %d times, want %d (all: %v)", k, got[k], n, got)
		}
	}
	var sum int64
	var errs int64
	for _, ep := range step.Endpoints {
		sum += ep.Requests
		errs += ep.Errors.Status
	}
	if sum != step.Requests || errs != step.Errors.Status || len(step.Endpoints) != 3 {
		t.Errorf("endpoints add up to %d requests and %d status errors over %d endpoints, want %d and %d over 3",
			sum, errs, len(step.Endpoints), step.Requests, step.Errors.Status)
	}
	names := []string{step.Endpoints[0].Name, step.Endpoints[1].Name, step.Endpoints[2].Name}
	if strings.Join(names, ",") != "list,create,GET /gone" {
		t.Errorf("endpoint names %v, want list, create, GET /gone", names)
	}
}

// Templates produce what they promise.
func TestTemplates(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "ids.txt", "a1\n\nb2\nc3\n")
	p := writeFile(t, dir, "t.yaml", `- path: /x/{{counter 10}}/{{random 3 5}}/{{choice red blue}}/{{line ids.txt}}
  headers:
    X-Id: "{{uuid}}"
`)
	m, err := scenario.LoadMix(p)
	if err != nil {
		t.Fatal(err)
	}
	src, err := m.Source(scenario.Scenario{URL: "http://127.0.0.1:9/"})
	if err != nil {
		t.Fatal(err)
	}
	rq, _ := src.Requester(0, 0)
	re := regexp.MustCompile(`(?s)^GET /x/(\d+)/(\d)/(red|blue)/(\w+) HTTP/1.1\r\n.*X-Id: ([0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12})\r\n\r\n$`)
	seenRand := map[string]bool{}
	uuids := map[string]bool{}
	for i := 0; i < 60; i++ {
		raw, n, ep, _ := rq.Request()
		mm := re.FindStringSubmatch(strings.ReplaceAll(string(raw), "\r\n", "\r\n"))
		if mm == nil || n != 1 || ep != 0 {
			t.Fatalf("request %d = %q (n %d ep %d): does not match the template", i, raw, n, ep)
		}
		if want := itoa(10 + i); mm[1] != want {
			t.Errorf("counter = %s, want %s", mm[1], want)
		}
		seenRand[mm[2]] = true
		if want := []string{"a1", "b2", "c3"}[i%3]; mm[4] != want {
			t.Errorf("line = %s, want %s", mm[4], want)
		}
		uuids[mm[5]] = true
	}
	if len(seenRand) != 3 || !seenRand["3"] || !seenRand["5"] {
		t.Errorf("random 3 5 gave %v over 60 draws, want exactly 3, 4 and 5", seenRand)
	}
	if len(uuids) != 60 {
		t.Errorf("%d distinct UUIDs of 60", len(uuids))
	}
	_ = rand.Int
}

func itoa(i int) string { return strconv.Itoa(i) }

// A malformed file never panics and always errors as file:line: problem.
func FuzzDecodeMix(f *testing.F) {
	f.Add([]byte("- path: /a\n  weight: 2\n"))
	f.Add([]byte(`{"endpoints":[{"path":"/x/{{counter}}","body":"{{uuid}}"}]}`))
	f.Add([]byte("endpoints: 3\n"))
	f.Add([]byte("- path: /a\n  headers: [\"bad header\"]\n"))
	f.Add([]byte("::\n\t-"))
	lineErr := regexp.MustCompile(`^f\.yaml:\d+: `)
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := scenario.DecodeMix("f.yaml", data)
		if err == nil {
			err = m.Validate()
		}
		if err == nil {
			return
		}
		for _, line := range strings.Split(err.Error(), "\n") {
			if !lineErr.MatchString(line) {
				t.Fatalf("error line %q lacks f.yaml:LINE:", line)
			}
		}
	})
}
