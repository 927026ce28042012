package cli

import (
	"math"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/internal/testenv"
	"github.com/apiperf/apiperf/result"
)

// TestTimingTargetPIDMatchesProc is issue 18's check of --target-pid end to end: the target
// CPU and RSS a sweep records for a process (a shell spinning on one core) match what
// schedstat and ps say of it, read independently around the sweep, within 5%.
func TestTimingTargetPIDMatchesProc(t *testing.T) {
	testenv.Timing(t) // compares CPU rates: it needs the serial pass
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	pid := testenv.BusyChild(t)
	dir := t.TempDir()
	c0, t0 := testenv.ThreadCPU(t, pid), time.Now()
	code, stdout, stderr := runCLI(t, "sweep", "--levels", "1", "-d", "3s", "--warmup", "0s", "-q", "--no-history",
		"--target-pid", strconv.Itoa(pid), "--dir", dir, "--name", "pid", srv.URL)
	c1, t1 := testenv.ThreadCPU(t, pid), time.Now()
	if code != ExitOK {
		t.Fatalf("apiperf sweep --target-pid %d = %d\n%s\n%s", pid, code, stdout, stderr)
	}
	out, err := exec.Command("ps", "-o", "rss=", "-p", strconv.Itoa(pid)).Output()
	if err != nil {
		t.Skipf("ps: %v", err)
	}
	kb, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil {
		t.Fatalf("ps rss %q: %v", out, err)
	}
	r, err := result.Load(filepath.Join(dir, "pid"))
	if err != nil {
		t.Fatal(err)
	}
	cpu, rss := r.PeakUsage()
	want := (c1 - c0).Seconds() / t1.Sub(t0).Seconds()
	t.Logf("target CPU: run.json %.3f cores, schedstat %.3f; RSS: run.json %.0f B, ps %.0f B", cpu, want, rss, kb*1024)
	// The level's window is most of the span schedstat was read over; a spinning shell's
	// rate is steady, so the two means agree within 5% (plus a 10 ms tick per second).
	if math.Abs(cpu-want) > 0.05*want+0.01 {
		t.Errorf("sweep --target-pid recorded %.3f cores for a spinning shell; schedstat says %.3f: more than 5%% apart", cpu, want)
	}
	if ps := kb * 1024; math.Abs(rss-ps) > 0.05*ps {
		t.Errorf("sweep --target-pid recorded an RSS of %.0f B; ps says %.0f B: more than 5%% apart", rss, ps)
	}
	if !strings.Contains(stdout, "target CPU") {
		t.Errorf("the sweep's table has no target CPU column:\n%s", stdout)
	}
}
