package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/target"
)

// TestMergeIsExact runs two generators against one target at the same time, merges their
// run.json files and checks the merge equals the sum of the parts.
func TestMergeIsExact(t *testing.T) {
	srv, err := target.Start(target.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := t.TempDir()
	paths := []string{filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")}
	done := make(chan int, 2)
	for i, p := range paths {
		go func() {
			var out, errOut bytes.Buffer
			n := []string{"300", "500"}[i]
			done <- Run(context.Background(), []string{"run", "-q", "-c", "3", "-n", n, "-o", p, "--no-history", srv.URL() + "/healthz"}, &out, &errOut)
		}()
	}
	for range paths {
		if code := <-done; code != ExitOK {
			t.Fatalf("a generator exited %d", code)
		}
	}
	var out, errOut bytes.Buffer
	merged := filepath.Join(dir, "m", "run.json")
	if code := Run(context.Background(), append([]string{"merge", "-o", merged}, paths...), &out, &errOut); code != ExitOK {
		t.Fatalf("merge exit %d: %s", code, &errOut)
	}
	m, err := result.Load(merged)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := result.Load(paths[0])
	b, _ := result.Load(paths[1])
	want := measure.NewHistogram()
	want.Merge(a.Last().Latency)
	want.Merge(b.Last().Latency)
	s := m.Last()
	if len(m.Steps) != 1 || s.Requests != 800 || s.Successes != 800 || !s.Latency.Equal(want) {
		t.Errorf("merged %d steps, %d requests, %d successes, histogram equal %v; want 1 step, 800, 800, true", len(m.Steps), s.Requests, s.Successes, s.Latency.Equal(want))
	}
	if m.Load.Connections != 6 {
		t.Errorf("merged connections = %d, want 3+3", m.Load.Connections)
	}
	if !strings.Contains(out.String(), "800 requests in") {
		t.Errorf("merge output lacks the wrk summary of 800 requests:\n%s", &out)
	}
	// The inputs are not changed by merging.
	if a2, _ := result.Load(paths[0]); a2.Last().Requests != 300 {
		t.Errorf("input changed: %d requests", a2.Last().Requests)
	}
}

func TestMergeBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"merge", filepath.Join(dir, "one.json")},                             // one run is nothing to merge
		{"merge", filepath.Join(dir, "x.json"), filepath.Join(dir, "y.json")}, // missing files
	} {
		var out, errOut bytes.Buffer
		if code := Run(context.Background(), args, &out, &errOut); code != ExitUsage {
			t.Errorf("apiperf %s: exit %d (%s), want 2", strings.Join(args, " "), code, &errOut)
		}
	}
}
