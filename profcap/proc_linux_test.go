package profcap

import (
	"context"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/internal/testenv"
)

// busyChild starts a shell spinning on one core and returns its pid; it is killed at cleanup.
func busyChild(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sh", "-c", "i=0; while :; do i=$((i+1)); done")
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start sh: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd.Process.Pid
}

// schedCPU reads the CPU time of pid from /proc/PID/schedstat (nanoseconds on a CPU),
// a different source than the tick counts ReadProc uses.
func schedCPU(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/schedstat")
	if err != nil {
		t.Skipf("no schedstat: %v", err)
	}
	ns, err := strconv.ParseInt(strings.Fields(string(b))[0], 10, 64)
	if err != nil {
		t.Fatalf("schedstat %q: %v", b, err)
	}
	return time.Duration(ns)
}

// psRSS asks ps for the resident size of pid in bytes.
func psRSS(t *testing.T, pid int) int64 {
	t.Helper()
	out, err := exec.Command("ps", "-o", "rss=", "-p", strconv.Itoa(pid)).Output()
	if err != nil {
		t.Skipf("ps: %v", err)
	}
	kb, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		t.Fatalf("ps rss %q: %v", out, err)
	}
	return kb << 10
}

func within(a, b, pct float64) bool {
	return math.Abs(a-b) <= pct/100*math.Max(math.Abs(a), math.Abs(b))
}

func TestReadProcMatchesIndependentReads(t *testing.T) {
	pid := busyChild(t)
	s0, err := ReadProc(pid)
	if err != nil {
		t.Fatal(err)
	}
	c0 := schedCPU(t, pid)
	time.Sleep(1500 * time.Millisecond)
	s1, err := ReadProc(pid)
	if err != nil {
		t.Fatal(err)
	}
	c1 := schedCPU(t, pid)
	got, want := (s1.CPU - s0.CPU).Seconds(), (c1 - c0).Seconds()
	t.Logf("CPU over 1.5 s: /proc/PID/stat %.3f s, schedstat %.3f s", got, want)
	// Ticks are 10 ms: allow them on top of 5%.
	if math.Abs(got-want) > 0.05*want+0.02 {
		t.Errorf("ReadProc CPU delta = %.3f s, schedstat says %.3f s: more than 5%% apart", got, want)
	}
	rss, ps := float64(s1.RSSBytes), float64(psRSS(t, pid))
	t.Logf("RSS: ReadProc %.0f B, ps %.0f B", rss, ps)
	if !within(rss, ps, 5) {
		t.Errorf("ReadProc RSS = %.0f B, ps says %.0f B: more than 5%% apart", rss, ps)
	}
}

// The sampler's CPU over its samples is the CPU the child used in between, by an
// independent source (schedstat). What holds however little CPU the child gets: the CPU
// between the first and the last sample is no more than schedstat counted around the whole
// run, and no less than that minus what one core can use outside the sampled span.
func TestProcSampler(t *testing.T) {
	pid := busyChild(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2200*time.Millisecond)
	defer cancel()
	c0, t0 := schedCPU(t, pid), time.Now()
	series, warns := (&ProcSampler{PID: pid, Interval: 500 * time.Millisecond}).Run(ctx)
	c1, t1 := schedCPU(t, pid), time.Now()
	if len(warns) > 0 {
		t.Errorf("ProcSampler warnings: %v", warns)
	}
	if len(series.Points) < 2 {
		t.Fatalf("ProcSampler: %d points in 2.2 s at 500 ms, want at least 2", len(series.Points))
	}
	if series.Cores < 1 {
		t.Errorf("ProcSampler: cores %d, want the child's affinity (>= 1)", series.Cores)
	}
	pts := series.Points
	if pts[0].CPUCores != nil {
		t.Errorf("the first sample has CPU %v cores: it has nothing to be a rate over", *pts[0].CPUCores)
	}
	var used float64 // core-seconds from the first sample to the last
	for i := 1; i < len(pts); i++ {
		if pts[i].CPUCores == nil || *pts[i].CPUCores < 0 || *pts[i].CPUCores > 1.1 {
			t.Fatalf("sample %d: CPU %v cores, want 0 to 1 for a single-threaded child", i, pts[i].CPUCores)
		}
		used += *pts[i].CPUCores * (pts[i].Offset - pts[i-1].Offset).Seconds()
	}
	all := (c1 - c0).Seconds()
	outside := t1.Sub(t0).Seconds() - (pts[len(pts)-1].Offset - pts[0].Offset).Seconds()
	t.Logf("CPU: sampler %.3f s over its span, schedstat %.3f s over %.3f s more", used, all, outside)
	// Ticks are 10 ms: one at each end, and 2% for stat's scaling of them.
	if tol := 0.02 + 0.02*all; used > all+tol || used < all-outside-tol {
		t.Errorf("ProcSampler counted %.3f s of CPU between its samples; schedstat %.3f s around them (%.3f s of wall time outside them)", used, all, outside)
	}
}

// With the machine to itself the sampler's mean rate is the child's by schedstat.
func TestTimingProcSampler(t *testing.T) {
	testenv.Timing(t)
	pid := busyChild(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2200*time.Millisecond)
	defer cancel()
	c0, t0 := schedCPU(t, pid), time.Now()
	series, _ := (&ProcSampler{PID: pid, Interval: 500 * time.Millisecond}).Run(ctx)
	c1, t1 := schedCPU(t, pid), time.Now()
	if len(series.Points) < 4 {
		t.Fatalf("ProcSampler: %d points in 2.2 s at 500 ms, want at least 4", len(series.Points))
	}
	sum := series.Summarize(0, time.Hour)
	want := (c1 - c0).Seconds() / t1.Sub(t0).Seconds()
	t.Logf("mean CPU: sampler %.3f cores, schedstat %.3f cores", sum.CPUCores.Mean, want)
	// The sampler's span is a little shorter than the independent one: 5% plus one tick per interval.
	if math.Abs(sum.CPUCores.Mean-want) > 0.05*want+0.02 {
		t.Errorf("ProcSampler mean CPU = %.3f cores, schedstat says %.3f: more than 5%% apart", sum.CPUCores.Mean, want)
	}
}

func TestCountCPUList(t *testing.T) {
	for s, want := range map[string]int{"0": 1, "0-1": 2, "0-3,6,8-9": 7, "": 0, "3-1": 0} {
		if got := countCPUList(s); got != want {
			t.Errorf("countCPUList(%q) = %d, want %d", s, got, want)
		}
	}
}
