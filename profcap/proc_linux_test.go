package profcap

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/apiperf/apiperf/internal/testenv"
)

// The sampler's CPU over its samples is the CPU the child used in between, by an
// independent source (schedstat). What holds however little CPU the child gets: the CPU
// between the first and the last sample is no more than schedstat counted around the whole
// run, and no less than that minus what one core can use outside the sampled span.
func TestProcSampler(t *testing.T) {
	pid := testenv.BusyChild(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2200*time.Millisecond)
	defer cancel()
	c0, t0 := testenv.ThreadCPU(t, pid), time.Now()
	series, warns := (&ProcSampler{PID: pid, Interval: 500 * time.Millisecond}).Run(ctx)
	c1, t1 := testenv.ThreadCPU(t, pid), time.Now()
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
	pid := testenv.BusyChild(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2200*time.Millisecond)
	defer cancel()
	c0, t0 := testenv.ThreadCPU(t, pid), time.Now()
	series, _ := (&ProcSampler{PID: pid, Interval: 500 * time.Millisecond}).Run(ctx)
	c1, t1 := testenv.ThreadCPU(t, pid), time.Now()
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
