package report

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	benchGolden(t, "bench.golden.txt", b.Bytes())
	// The benchmark format: "Benchmark<Name> <iterations> (<value> <unit>)+", no spaces in names.
	var n int
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		f := strings.Fields(line)
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

func benchGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if hasUpdateFlag() {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file: %v (run go test -update)", err)
	}
	if !bytes.Equal(got, want) {
		tmp := filepath.Join(t.TempDir(), name)
		os.WriteFile(tmp, got, 0o644)
		d, _ := exec.Command("diff", "-u", path, tmp).CombinedOutput()
		t.Errorf("%s differs from the golden file (go test -update to accept):\n%s", name, d)
	}
}

func init() {
	// -update may be registered by another test file of the package already.
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files in testdata")
	}
}

// hasUpdateFlag reports whether -update was passed.
func hasUpdateFlag() bool { return flag.Lookup("update").Value.String() == "true" }
