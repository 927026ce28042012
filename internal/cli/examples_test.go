package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/target"
)

// examplesDir holds the scenario files docs/SCENARIOS.md shows.
const examplesDir = "../../examples/scenarios"

// TestScenarioExamples runs every example scenario file against a loopback server (the port in
// the files, 8080, replaced by the server's) and checks that docs/SCENARIOS.md shows each file
// exactly as it is.
func TestScenarioExamples(t *testing.T) {
	doc, err := os.ReadFile("../../docs/SCENARIOS.md")
	if err != nil {
		t.Fatal(err)
	}
	shown := map[string]string{}
	for _, m := range regexp.MustCompile("(?s)<!-- (examples/scenarios/[^ ]+) -->\n```[a-z]*\n(.*?)```\n").FindAllStringSubmatch(string(doc), -1) {
		shown[filepath.Base(m[1])] = m[2]
	}
	files, _ := filepath.Glob(filepath.Join(examplesDir, "*"))
	if len(files) < 4 {
		t.Fatalf("examples: %d files in %s; want the scenario examples", len(files), examplesDir)
	}
	var mu sync.Mutex
	var seen []string // method, path and the headers and body the test checks
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.RequestURI()+" accept="+r.Header.Get("Accept")+" "+string(body))
		mu.Unlock()
		w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")

	tmp := t.TempDir()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(f)
		if shown[name] != string(b) {
			t.Errorf("docs/SCENARIOS.md does not show %s as it is (a block after <!-- examples/scenarios/%s -->)", name, name)
		}
		os.WriteFile(filepath.Join(tmp, name), []byte(strings.ReplaceAll(string(b), "127.0.0.1:8080", host)), 0o644)
	}
	demo, err := target.Start(target.Config{Demo: true, Middleware: []string{"none"}})
	if err != nil {
		t.Fatal(err)
	}
	defer demo.Close()
	for _, tc := range []struct {
		file  string
		names []string // the endpoints the report must show
		want  []*regexp.Regexp
	}{
		{"demo.yaml", []string{"read a user", "echo an event"}, nil}, // against the demo target: every request must succeed
		{"shop.yaml", []string{"list products", "one product", "add to cart"}, []*regexp.Regexp{
			regexp.MustCompile(`^GET /api/products\?page=([1-9]|1[0-9]|20)&sort=(price|name|newest) accept=application/json $`),
			regexp.MustCompile(`^GET /api/products/(17|42|256|4096) accept=application/json $`),
			regexp.MustCompile(`^POST /api/cart accept=application/json \{"product": [0-9]+, "qty": 1, "order": 10[0-9][0-9]\}$`),
		}},
		{"shop.json", []string{"cart", "checkout"}, []*regexp.Regexp{
			regexp.MustCompile(`^GET /api/cart accept=application/json $`),
			regexp.MustCompile(`^POST /api/orders accept=application/json \{"order": [0-9]+, "product": (17|42|256|4096), "coupon": "(NONE|SPRING10|VIP)"\}\n$`),
		}},
	} {
		mu.Lock()
		seen = nil
		mu.Unlock()
		out := filepath.Join(tmp, tc.file+".run.json")
		base := "http://" + host
		if tc.want == nil {
			base = demo.URL()
		}
		code, stdout, stderr := newcomerCLI(t, "run", "--no-history", "-q", "-c", "2", "-t", "1", "-n", "60",
			"--scenario", filepath.Join(tmp, tc.file), "-o", out, base)
		if code != ExitOK {
			t.Errorf("apiperf run --scenario %s: exit %d, stderr %q", tc.file, code, stderr)
			continue
		}
		for _, n := range tc.names {
			if !strings.Contains(stdout, n) {
				t.Errorf("run --scenario %s: the report has no row for endpoint %q:\n%s", tc.file, n, stdout)
			}
		}
		r, err := result.Load(out)
		if err != nil || r.Scenario.Mix == nil || len(r.Scenario.Mix.Endpoints) != len(tc.names) {
			b, _ := json.Marshal(r)
			t.Errorf("run.json of %s: %v, %s; want its mix of %d endpoints saved", tc.file, err, b, len(tc.names))
			continue
		}
		if tc.want == nil {
			if s := r.Last(); s == nil || s.Successes != s.Attempts || s.Attempts != 60 {
				t.Errorf("run --scenario %s against serve --demo: %+v; want all 60 requests to succeed", tc.file, s)
			}
			continue
		}
		mu.Lock()
		got := append([]string(nil), seen...)
		mu.Unlock()
		t.Logf("%s: %d requests, e.g. %q", tc.file, len(got), got[:min(2, len(got))])
		hits := make([]int, len(tc.want))
		for _, req := range got {
			i := 0
			for i < len(tc.want) && !tc.want[i].MatchString(req) {
				i++
			}
			if i == len(tc.want) {
				t.Errorf("run --scenario %s sent a request no endpoint describes: %q", tc.file, req)
				continue
			}
			hits[i]++
		}
		for i, n := range hits {
			if n == 0 {
				t.Errorf("run --scenario %s: no request matched %s", tc.file, tc.want[i])
			}
		}
	}
}
