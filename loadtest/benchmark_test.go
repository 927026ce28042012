package loadtest

import (
	"net/http"
	"testing"
)

// TestBenchmarkReports runs Benchmark through testing.Benchmark and checks the metrics it
// reports, in the units benchstat reads.
func TestBenchmarkReports(t *testing.T) {
	h := &costly{allocs: 30}
	var last *Result
	br := testing.Benchmark(func(b *testing.B) {
		last = Benchmark(b, Handler(h), Connections(2))
	})
	if br.N < 1 || last == nil {
		t.Fatalf("testing.Benchmark ran %d times", br.N)
	}
	if got := last.Step().Requests; got != int64(br.N) {
		t.Errorf("the last run sent %d requests, b.N was %d: want b.N exactly", got, br.N)
	}
	for _, unit := range []string{"req/s", "p50-ns", "p99-ns", "p999-ns", "CPU-ns/req", "allocs/req", "B/req"} {
		if _, ok := br.Extra[unit]; !ok {
			t.Errorf("no %s reported (got %v)", unit, br.Extra)
		}
	}
	if p50, p99 := br.Extra["p50-ns"], br.Extra["p99-ns"]; p50 <= 0 || p99 < p50 {
		t.Errorf("p50-ns %v, p99-ns %v: want 0 < p50 <= p99", p50, p99)
	}
	if a := br.Extra["allocs/req"]; a < 27 || a > 33 { // net/http's own vary by about one
		t.Errorf("allocs/req %.2f for a handler that allocates 30 times: want 27 to 33", a)
	}
	if br.T <= 0 || br.NsPerOp() <= 0 {
		t.Errorf("benchmark time %v: want the measured load's time", br.T)
	}
}

// BenchmarkEmptyHandler is what `go test -bench .` reports for an empty handler.
func BenchmarkEmptyHandler(b *testing.B) {
	Benchmark(b, Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})), Connections(2))
}
