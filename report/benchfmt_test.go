package report

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/internal/golden"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/scenario"
)

func benchRun() *result.Run {
	r := &result.Run{Version: result.Version, Tool: "apiperf test", Kind: result.KindRun,
		Scenario: scenario.Scenario{URL: "http://127.0.0.1:8080/api/users?x=1"}}
	for i := range 3 {
		h := measure.NewHistogram()
		h.RecordN(time.Duration(500+100*i)*time.Microsecond, 990)
		h.RecordN(2*time.Millisecond, 10)
		r.Steps = append(r.Steps, &measure.Step{Label: "c=50", Rep: i, Elapsed: measure.Duration(time.Second / 10),
			Attempts: 1000, Requests: 1000, Successes: 999, Latency: h})
	}
	return r
}

func TestWriteBench(t *testing.T) {
	var b bytes.Buffer
	if err := WriteBench(&b, benchRun()); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "bench.golden.txt", b.Bytes())
	// The benchmark format: "Benchmark<Name> <iterations> (<value> <unit>)+", no spaces in names.
	var n int
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		f := strings.Fields(line)
		if strings.HasPrefix(line, "# ") || strings.HasPrefix(line, "Unit ") {
			continue // a comment benchstat ignores; unit metadata
		}
		if !strings.HasPrefix(line, "Benchmark") {
			if k, _, ok := strings.Cut(line, ": "); !ok || strings.ContainsAny(k, " \t") {
				t.Errorf("line %q is neither a result nor a key: value configuration line", line)
			}
			continue
		}
		n++
		if len(f) != 12 || f[0] != "BenchmarkAPI/GET_api_users/c=50" || f[1] != "1000" || f[4] != "10000.00" || f[5] != "req/s" {
			t.Errorf("result line %q: want BenchmarkAPI/GET_api_users/c=50 1000 <ns> ns/op 10000.00 req/s and 3 more value-unit pairs", line)
		}
	}
	if n != 3 {
		t.Errorf("%d result lines; want 3 (one per repetition)", n)
	}
}

// TestBenchstatReadsBench runs x/perf's benchstat (go install golang.org/x/perf/cmd/benchstat@latest,
// as .ci/run does) on two runs of one API on different ports: one table, times in sec/op-style
// units scaled as benchstat scales them, no unit it does not know.
func TestBenchstatReadsBench(t *testing.T) {
	bin, err := exec.LookPath("benchstat")
	if err != nil {
		gobin := filepath.Join(os.Getenv("HOME"), "go", "bin", "benchstat")
		if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
			gobin = filepath.Join(strings.TrimSpace(string(out)), "bin", "benchstat")
		}
		if _, err := os.Stat(gobin); err != nil {
			t.Skip("benchstat not installed (go install golang.org/x/perf/cmd/benchstat@latest)")
		}
		bin = gobin
	}
	dir := t.TempDir()
	var files []string
	for i, port := range []string{"41231", "39877"} {
		r := benchRun()
		r.Scenario.URL = "http://127.0.0.1:" + port + "/api/users?x=1"
		if i == 1 {
			for _, s := range r.Steps {
				s.Elapsed *= 2 // half the throughput
			}
		}
		var b bytes.Buffer
		if err := WriteBench(&b, r); err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, []string{"old.txt", "new.txt"}[i])
		os.WriteFile(f, b.Bytes(), 0o644)
		files = append(files, f)
	}
	cmd := exec.Command(bin, files...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("benchstat %v: %v\n%s", files, err, out)
	}
	text := string(out)
	t.Logf("benchstat old.txt new.txt:\n%s", text)
	if n := strings.Count(text, "apiperf-kind:"); n != 1 {
		t.Errorf("benchstat printed %d tables (apiperf-kind headers); want one for two runs on different ports", n)
	}
	for _, want := range []string{"sec/op", "p50-sec/op", "p99-sec/op", "req/s", "success-%", "614.0µ", "10.000k", "5.000k"} {
		if !strings.Contains(text, want) {
			t.Errorf("benchstat output lacks %q", want)
		}
	}
	for _, bad := range []string{"p50-ms", "apiperf-url", "41231", "39877"} {
		if strings.Contains(text, bad) {
			t.Errorf("benchstat output contains %q", bad)
		}
	}
}
