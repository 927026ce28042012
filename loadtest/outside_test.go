package loadtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/internal/testenv"
)

// outsideModule is a user's _test.go in a module of their own: a handler of known cost (40
// allocations, 200 rounds of SHA-256 over 1 kB), the handler alone (TestAlone prints its
// allocations, bytes and CPU per call, measured as testing.AllocsPerRun and a timed loop do),
// and a benchmark through loadtest.Benchmark.
const outsideModule = `package api

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/apiperf/apiperf/loadtest"
)

var sink [][]byte

type known struct{}

func (known) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	keep := make([][]byte, 0, 40)
	for range 39 {
		keep = append(keep, make([]byte, 64))
	}
	var block [1024]byte
	for range 200 {
		sum := sha256.Sum256(block[:])
		copy(block[:], sum[:])
	}
	sink = keep
	w.Write([]byte("done"))
}

type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}

func cpu() time.Duration {
	var u syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &u)
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

func TestAlone(t *testing.T) {
	w, r := &discard{h: http.Header{}}, httptestRequest()
	allocs := testing.AllocsPerRun(500, func() { known{}.ServeHTTP(w, r) })
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	const n = 3000
	c0 := cpu()
	for range n {
		known{}.ServeHTTP(w, r)
	}
	c1 := cpu()
	runtime.ReadMemStats(&m1)
	fmt.Printf("alone: %.2f allocs %.1f bytes %d cpu-ns\n", allocs, float64(m1.TotalAlloc-m0.TotalAlloc)/n, int64(c1-c0)/n)
}

func httptestRequest() *http.Request {
	r, _ := http.NewRequest("GET", "http://127.0.0.1/", nil)
	return r
}

func BenchmarkKnown(b *testing.B) {
	loadtest.Benchmark(b, loadtest.Handler(known{}), loadtest.Connections(1))
}
`

// TestTimingOutsideModuleCost is issue 37's check as a user would run it: a module outside
// this repository (requiring it by a replace to the checkout) runs `go test -bench . -count
// 6` on a handler of known cost; the handler's allocs/req and B/req come within 5% of the
// handler alone, CPU-ns/req within 15% (medians of the six), and benchstat reads the output
// (a p99 row).
func TestTimingOutsideModuleCost(t *testing.T) {
	testenv.Timing(t)
	dir := userModule(t, outsideModule)
	out, err := goTestIn(t, dir, 6*time.Minute, "-count=6", "-run", "TestAlone", "-bench", ".", "-benchtime=3000x", ".")
	if err != nil {
		t.Fatalf("go test -bench . -count 6 in a module of its own: %v\n%s", err, out)
	}
	t.Logf("the outside module's output:\n%s", out)
	alone := regexp.MustCompile(`(?m)^alone: ([\d.]+) allocs ([\d.]+) bytes (\d+) cpu-ns$`).FindAllStringSubmatch(string(out), -1)
	if len(alone) != 6 {
		t.Fatalf("want 6 lines of the handler alone, got %d", len(alone))
	}
	median := func(xs []float64) float64 { slices.Sort(xs); return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2 }
	col := func(rows [][]string, i int) []float64 {
		var xs []float64
		for _, r := range rows {
			x, _ := strconv.ParseFloat(r[i], 64)
			xs = append(xs, x)
		}
		return xs
	}
	want := map[string]float64{"allocs/req": median(col(alone, 1)), "B/req": median(col(alone, 2)), "CPU-ns/req": median(col(alone, 3))}
	bound := map[string]float64{"allocs/req": 0.05, "B/req": 0.05, "CPU-ns/req": 0.15}
	lines := regexp.MustCompile(`(?m)^BenchmarkKnown-\d+\s.*$`).FindAllString(string(out), -1)
	if len(lines) != 6 {
		t.Fatalf("want 6 BenchmarkKnown lines, got %d", len(lines))
	}
	for unit, w := range want {
		re := regexp.MustCompile(`\s([\d.e+]+) ` + regexp.QuoteMeta(unit) + `(\s|$)`)
		var got []float64
		for _, l := range lines {
			m := re.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("no %s in %q", unit, l)
			}
			x, _ := strconv.ParseFloat(m[1], 64)
			got = append(got, x)
		}
		g := median(got)
		t.Logf("%s: median %.4g of %v through loadtest, %.4g alone", unit, g, got, w)
		if g < w*(1-bound[unit]) || g > w*(1+bound[unit]) {
			t.Errorf("%s: median %.4g through loadtest, %.4g alone: want within %.0f%%", unit, g, w, 100*bound[unit])
		}
	}
	benchstatReads(t, dir, out)
}

// benchstatReads runs x/perf's benchstat on out (where .ci/run installs it) and wants its
// p99 row.
func benchstatReads(t *testing.T, dir string, out []byte) {
	bin, err := exec.LookPath("benchstat")
	if err != nil {
		bin = filepath.Join(os.Getenv("HOME"), "go", "bin", "benchstat")
		if _, err := os.Stat(bin); err != nil {
			t.Skip("no benchstat (go install golang.org/x/perf/cmd/benchstat@latest; .ci/run does)")
		}
	}
	f := filepath.Join(dir, "new.txt")
	if err := os.WriteFile(f, out, 0o644); err != nil {
		t.Fatal(err)
	}
	bs, err := exec.Command(bin, f).CombinedOutput()
	if err != nil {
		t.Fatalf("benchstat: %v\n%s", err, bs)
	}
	if !strings.Contains(string(bs), "p99-sec") || !strings.Contains(string(bs), "Known") {
		t.Errorf("benchstat printed no p99 row for BenchmarkKnown:\n%s", bs)
	}
	t.Logf("benchstat:\n%s", bs)
}
