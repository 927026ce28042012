package loadtest

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/compare"
)

// abLoad is a short load for the A/B tests: a few connections, short steps, a short warmup.
var abLoad = []Option{Connections(2), Duration(150 * time.Millisecond), Warmup(30 * time.Millisecond)}

// TestABFindsSlowerHandler: B answers after a 3 ms sleep, A at once: the comparison from Go
// fails B, on its QPS or its p99 (a busy machine's p99 is noisy), as `apiperf ab` would. It
// may add pairs, 10 at a time, up to 30: beside `stress-ng --cpu 2` 8 pairs were too noisy to
// decide (QPS x0.184 [0.089, 1.063], p=0.055: inconclusive).
func TestABFindsSlowerHandler(t *testing.T) {
	fast := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(3 * time.Millisecond)
		w.Write([]byte("ok"))
	})
	res, err := AB(context.Background(), Handler(fast), Handler(slow), abLoad, Pairs(10), MaxPairs(30))
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := res.Text(&text); err != nil {
		t.Fatal(err)
	}
	if res.Outcome() != compare.OutcomeFail {
		t.Fatalf("B sleeps 3 ms per request: outcome %s, want fail\n%s", res.Outcome(), text.String())
	}
	failed := map[string]bool{}
	for _, c := range res.Checks {
		failed[c.Metric] = failed[c.Metric] || c.Regression
	}
	if !failed[compare.MetricQPS] && !failed[compare.MetricP99] {
		t.Errorf("neither QPS nor p99 is a regression:\n%s", text.String())
	}
	if res.A != "in-process handler" || res.B != "in-process handler" {
		t.Errorf("sides named %q and %q", res.A, res.B)
	}
}

// TestABSameHandler: A against itself is never a regression (wide budgets: a busy machine's
// drift is not what this checks), and AssertAB passes it.
func TestABSameHandler(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	res := AssertAB(t, Handler(h), Handler(h), abLoad, Pairs(8), MaxPairs(8), Budget(60, 300))
	if got := len(res.Checks); got == 0 {
		t.Fatalf("no checks in an A/A comparison")
	}
	if res.Outcome() == compare.OutcomeFail {
		t.Errorf("A against itself failed")
	}
}

// TestABBadOptions: bad A/B options are one error before any load.
func TestABBadOptions(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	for _, c := range []struct {
		name string
		opts []Option
		ab   []ABOption
		want string
	}{
		{"too few pairs", abLoad, []ABOption{Pairs(2)}, "cannot show a significant change"},
		{"most pairs below pairs", abLoad, []ABOption{Pairs(8), MaxPairs(4)}, "want 1 <= pairs <= most pairs"},
		{"a cost", append([]Option{MeasureCost()}, abLoad...), nil, "give no MeasureCost"},
		{"a bad budget", abLoad, []ABOption{Budget(-5, 10)}, "qps"},
	} {
		start := time.Now()
		_, err := AB(context.Background(), Handler(h), Handler(h), c.opts, c.ab...)
		if err == nil || !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(c.want)) {
			t.Errorf("%s: err %v, want it to say %q", c.name, err, c.want)
		}
		if time.Since(start) > 5*time.Second {
			t.Errorf("%s: took %v: bad options must be refused before any load", c.name, time.Since(start))
		}
	}
}
