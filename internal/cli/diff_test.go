package cli

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/scenario"
	"github.com/apiperf/apiperf/sweep"
)

// measuredRun loads a loopback server at each concurrency level with a bounded number of
// requests and saves the run as <dir>/<name>/run.json.
func measuredRun(t *testing.T, dir, name string, levels ...int) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("x") != "" {
			w.WriteHeader(http.StatusNotFound)
		}
		fmt.Fprint(w, "ok")
	}))
	t.Cleanup(srv.Close)
	sc := scenario.Scenario{URL: srv.URL + "/"}
	target, err := scenario.ParseTarget(sc.URL)
	if err != nil {
		t.Fatal(err)
	}
	doc := newRun(result.KindSweep, sc, load.Config{}, []string{"--levels", "2,4", sc.URL})
	doc.Name = name
	for _, c := range levels {
		cfg := load.Config{Connections: c, Threads: 1, Requests: 300, Duration: measure.Duration(5 * time.Second), Timeout: measure.Duration(2 * time.Second)}
		doc.Load = cfg
		src, err := scenario.NewStatic(sc)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		step, err := load.Run(ctx, cfg, src, target)
		cancel()
		if err != nil {
			t.Fatalf("load.Run at c=%d: %v", c, err)
		}
		step.Label = sweep.ConfigLabel(cfg)
		doc.Steps = append(doc.Steps, step)
	}
	doc.End = time.Now().UTC()
	p := filepath.Join(dir, name, "run.json")
	if err := doc.Save(p); err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(p)
}

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = Run(context.Background(), args, &o, &e)
	return code, o.String(), e.String()
}

func TestReportCommand(t *testing.T) {
	dir := t.TempDir()
	runDir := measuredRun(t, dir, "api", 2, 4)
	code, out, errOut := runCLI(t, "report", filepath.Join(runDir, "run.json"))
	if code != ExitOK {
		t.Fatalf("apiperf report = %d, stderr %s", code, errOut)
	}
	for _, f := range []string{"api.dat", "api_qps_ttlb.png", "api_qps_ttlb.svg", "api_successrate.png", "api_successrate.svg", "api_latency.png", "api_latency.svg", "report.html"} {
		p := filepath.Join(runDir, f)
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			t.Errorf("apiperf report did not write %s (%v)", f, err)
		}
		if !strings.Contains(out, p) {
			t.Errorf("apiperf report did not list %s on stdout:\n%s", p, out)
		}
	}
	dat, _ := os.ReadFile(filepath.Join(runDir, "api.dat"))
	if lines := strings.Split(strings.TrimSpace(string(dat)), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[0], "2 ") || !strings.HasPrefix(lines[1], "4 ") {
		t.Errorf("api.dat = %q, want one line per level (2, then 4)", dat)
	}
}

func TestDiffCommand(t *testing.T) {
	dir := t.TempDir()
	a := measuredRun(t, dir, "before", 2, 4)
	b := measuredRun(t, dir, "after", 2, 4)
	classic := filepath.Join(dir, "mydata.dat")
	// A file as the classic script writes it, with level 3 that the runs lack.
	if err := os.WriteFile(classic, []byte("2 1500.25 1.33 100.00\n3 1800.00 1.7 100.00\n4 2100.5 1.9 99.99\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		a, b    string
		base    string // stem of the chart files
		inTable string // a line of the table that proves the join
	}{
		{"two run directories", a, b, "before_after", "2"},
		{"a run.json against a classic .dat", filepath.Join(a, "run.json"), classic, "before_mydata", "3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, "out-"+tt.base)
			code, stdout, stderr := runCLI(t, "diff", "--dir", out, tt.a, tt.b)
			if code != ExitOK {
				t.Fatalf("apiperf diff = %d, stderr %s", code, stderr)
			}
			for _, f := range []string{tt.base + ".qps.ttlb.diff.png", tt.base + ".qps.ttlb.diff.svg", tt.base + ".successrate.diff.png", tt.base + ".successrate.diff.svg", tt.base + ".diff.html"} {
				if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
					t.Errorf("apiperf diff did not write %s (%v)", f, err)
				}
			}
			if !regexp.MustCompile(`peak QPS is [0-9.]+% of `).MatchString(stdout) {
				t.Errorf("no headline ratio in stdout:\n%s", stdout)
			}
			if !regexp.MustCompile(`(?m)^\s+` + tt.inTable + `\s`).MatchString(stdout) {
				t.Errorf("no row for level %s in stdout:\n%s", tt.inTable, stdout)
			}
		})
	}
}

func TestDiffBadInput(t *testing.T) {
	dir := t.TempDir()
	good := measuredRun(t, dir, "good", 2)
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bad := write("bad.dat", "200 1 1 100\n500 lots 1 100\n")
	badJSON := write("broken.json", "{\n  \"version\": 1,\n  \"steps\": [\n    {\"label\": oops}\n  ]\n}\n")
	missing := filepath.Join(dir, "nope.dat")
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string // in the one-line stderr message
	}{
		{[]string{"diff", good, bad}, "bad.dat:2: qps \"lots\""},                    // a malformed .dat names file and line
		{[]string{"diff", missing, good}, "nope.dat: cannot read it: no such file"}, // a missing file
		{[]string{"diff", good, badJSON}, "broken.json:4: "},                        // malformed run.json: its line
		{[]string{"diff", good}, "want two runs A and B, got 1"},                    // one argument
		{[]string{"report", empty}, "empty/run.json: cannot read it"},               // a directory without run.json
		{[]string{"report", badJSON}, "broken.json:4: "},                            // report of a malformed run.json
	}
	for _, tt := range tests {
		code, stdout, stderr := runCLI(t, append(tt.args, "--dir", filepath.Join(dir, "out"))...)
		if code != ExitUsage || !strings.Contains(stderr, tt.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("apiperf %v = %d, stderr %q, stdout %q; want exit 2 and one line containing %q", tt.args, code, stderr, stdout, tt.want)
		}
	}
}
