package loadtest

import (
	"context"
	"crypto/sha256"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/internal/testenv"
)

// TestHelperHashServer is not a test: run by TestTargetProcessCPU as a child, it serves on
// the listener it inherited, hashing 256 KiB per request, until killed.
func TestHelperHashServer(t *testing.T) {
	ln := testenv.ChildListener(t)
	buf := make([]byte, 256<<10)
	http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sum := sha256.Sum256(buf)
		w.Write(sum[:4])
	}))
}

// A URL target's CPU per request, read from its process as the CLI reads it: found by its
// loopback port or given by pid, at least the 256 KiB hash each request costs (an empty
// handler costs a few tens of µs); bad uses refused before any request.
func TestTargetProcessCPU(t *testing.T) {
	addr, child := testenv.ServeInChild(t, "TestHelperHashServer")
	url, pid := "http://"+addr+"/", child.Process.Pid
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, p := range []int{0, pid} {
		res, err := Run(ctx, URL(url), Connections(2), Requests(400), Threads(1), TargetProcess(p))
		if err != nil {
			t.Fatalf("TargetProcess(%d): %v", p, err)
		}
		t.Logf("TargetProcess(%d): %s, target CPU %v per request", p, res, res.TargetCPU())
		// sha256 runs at 0.5 to 2 GB/s here: 256 KiB is 130 to 500 µs of CPU.
		if cpu := res.TargetCPU(); res.Step().Requests != 400 || cpu < 60*time.Microsecond || cpu > 20*time.Millisecond {
			t.Errorf("TargetProcess(%d): %d requests, target CPU %v per request; want 400, 60µs to 20ms", p, res.Step().Requests, cpu)
		}
	}
	if res, err := Run(ctx, URL(url), Requests(10)); err != nil || res.TargetCPU() != 0 {
		t.Errorf("without TargetProcess: %v, target CPU %v; want none measured", err, res.TargetCPU())
	}
	for _, tc := range []struct {
		target Target
		opts   []Option
		want   string
	}{
		{URL("http://target.invalid:8080/"), []Option{TargetProcess(0)}, "not a loopback address"}, // refused before any lookup
		{URL(url), []Option{TargetProcess(-1)}, "want a process id"},
		{URL(url), []Option{TargetProcess(0), Warmup(time.Second)}, "give no Warmup"},
		{Handler(http.NotFoundHandler()), []Option{TargetProcess(0)}, "for a URL target"},
	} {
		if _, err := Run(ctx, tc.target, append(tc.opts, Requests(10))...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %d options: %v; want an error saying %q", tc.target, len(tc.opts), err, tc.want)
		}
	}
}
