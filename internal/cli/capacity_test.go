package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiperf/apiperf/internal/testenv"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/target"
)

// TestCapacityFindsAKnownCeiling searches a target that serves at most K requests per second;
// above K requests queue, so their latency grows and the objective fails.
func TestTimingCapacityFindsAKnownCeiling(t *testing.T) {
	testenv.Timing(t)
	const k = 400.0
	srv, err := target.Start(target.Config{MaxRPS: k})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	args := []string{"capacity", srv.URL() + "/healthz", "--slo", "p99<=100ms,success>=99.9%", "-d", "1500ms",
		"--warmup", "0", "--start", "100", "--dir", dir, "--name", "cap", "--no-history"}
	code := Run(context.Background(), args, &out, &errOut)
	if code != ExitOK {
		t.Fatalf("apiperf %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, &out, &errOut)
	}
	doc, err := result.Load(filepath.Join(dir, "cap", "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	c := doc.Capacity
	if c == nil || c.Answer < 0.9*k || c.Answer > 1.1*k {
		t.Fatalf("capacity answer %+v, want within 10%% of %v\nstderr:\n%s", c, k, &errOut)
	}
	if !strings.Contains(out.String(), "capacity: ") || len(doc.Steps) != len(c.Probes) {
		t.Errorf("stdout lacks the capacity headline or probes (%d) and steps (%d) differ:\n%s", len(c.Probes), len(doc.Steps), &out)
	}
	// A capacity run ends with a verdict too, printed and kept in run.json.
	if doc.Verdict == nil || !strings.Contains(out.String(), "verdict: ") {
		t.Errorf("capacity run: verdict %v in run.json; want one, printed:\n%s", doc.Verdict, &out)
	}
	t.Logf("answer %g req/s (limit %g) after %d probes; %s", c.Answer, c.Limit, len(c.Probes), doc.Verdict.Headline())
}

func TestCapacityBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"capacity"}, // no URL
		{"capacity", "http://127.0.0.1:1/", "--slo", "p99"}, // malformed objective
		{"capacity", "http://127.0.0.1:1/", "--precision", "0"},
		{"capacity", "http://127.0.0.1:1/", "-R", "100"}, // the search chooses rates
	} {
		var out, errOut bytes.Buffer
		if code := Run(context.Background(), args, &out, &errOut); code != ExitUsage || strings.Count(errOut.String(), "\n") != 1 {
			t.Errorf("apiperf %s: exit %d, stderr %q; want exit 2 and one line", strings.Join(args, " "), code, errOut.String())
		}
	}
}
