package conditions

import (
	"math"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apiperf/apiperf/internal/testenv"
	"github.com/apiperf/apiperf/measure"
)

// A spinning child is another process's CPU to a session that does not know it, and the
// target's to one that does. Both sessions sample the same window, so whatever else this
// shared machine runs is the same for both: the difference of their others' CPU is the
// child's, as its own schedstat says (read independently), and the session that knows
// the child records it as the target instead.
func TestSessionOthersSeesBusyProcess(t *testing.T) {
	child := testenv.BusyChild(t)
	blind := NewSession(Generator{}, nil)
	blind.Interval = 250 * time.Millisecond
	aware := NewSession(Generator{}, &Target{PID: child})
	aware.Interval = 250 * time.Millisecond

	c0, t0 := testenv.ThreadCPU(t, child), time.Now()
	endBlind, endAware := blind.Begin("c=1", 0), aware.Begin("c=1", 0)
	time.Sleep(2 * time.Second)
	step := &measure.Step{Generator: &measure.Generator{Wall: measure.Duration(2 * time.Second), RunWait: measure.Duration(100 * time.Millisecond)}}
	endBlind(step)
	endAware(step)
	childCores := (testenv.ThreadCPU(t, child) - c0).Seconds() / time.Since(t0).Seconds()

	b, a := blind.Record().Steps, aware.Record().Steps
	if len(b) != 1 || len(a) != 1 {
		t.Fatalf("sessions recorded %d and %d steps, want 1 each", len(b), len(a))
	}
	sb, sa := b[0], a[0]
	t.Logf("child %.3f cores (schedstat); blind: busy %.3f others %.3f (max %.3f, %d samples); aware: others %.3f target %v",
		childCores, sb.Busy, sb.Others, sb.OthersMax, sb.Samples, sa.Others, deref(sa.Target))
	if sb.Samples < 4 || sb.Seconds < 1.9 {
		t.Errorf("blind session: %d samples over %.2f s, want at least 4 over 2 s at 250 ms", sb.Samples, sb.Seconds)
	}
	if sa.Target == nil || math.Abs(*sa.Target-childCores) > 0.05 {
		t.Errorf("aware session recorded target CPU %v, schedstat says the child used %.3f cores", deref(sa.Target), childCores)
	}
	// /proc/stat ticks are 10 ms on each of the CPUs: allow a few per second.
	if got := sb.Others - sa.Others; math.Abs(got-childCores) > 0.06 {
		t.Errorf("others' CPU without the child's PID less with it = %.3f cores; the child used %.3f", got, childCores)
	}
	if sb.Others < childCores-0.06 || sb.OthersMax < sb.Others {
		t.Errorf("blind session: others %.3f (max %.3f), want at least the child's %.3f", sb.Others, sb.OthersMax, childCores)
	}
	if sb.Busy > float64(runtime.NumCPU())+0.05 || sb.Busy < sb.Others {
		t.Errorf("blind session: machine busy %.3f cores with others %.3f on %d CPUs", sb.Busy, sb.Others, runtime.NumCPU())
	}
	if math.Abs(sb.RunWait-0.05) > 1e-9 {
		t.Errorf("RunWait = %v, want the step's 100 ms over 2 s = 0.05 cores", sb.RunWait)
	}
	// The record says so: the child took more than a quarter of a core.
	if childCores > 0.3 {
		off := blind.Record().Off(DefaultThresholds)
		if len(off) == 0 || !strings.Contains(off[0], "other processes took") {
			t.Errorf("Off of a step with a spinning child = %q, want it to name other processes", off)
		}
	}
	// The aware session subtracts the child: only what else runs here remains.
	if sa.Others > sb.Others-childCores+0.06 {
		t.Errorf("aware session's others %.3f should be the blind one's %.3f less the child's %.3f", sa.Others, sb.Others, childCores)
	}
}

func deref(p *float64) any {
	if p == nil {
		return "unknown"
	}
	return *p
}

// A target on this machine whose process is not known is counted among the others: the
// step says so, and Busy does not call it a busy machine.
func TestSessionLocalTargetUnknown(t *testing.T) {
	testenv.BusyChild(t)
	s := NewSession(Generator{}, nil)
	s.TargetLocal, s.Interval = true, 200*time.Millisecond
	end := s.Begin("c=1", 0)
	time.Sleep(600 * time.Millisecond)
	end(&measure.Step{})
	r := s.Record()
	if len(r.Steps) != 1 || !r.Steps[0].OthersHasTarget || r.Steps[0].Target != nil {
		t.Fatalf("steps %+v: want one with OthersHasTarget and no target CPU", r.Steps)
	}
	// The hypervisor's steal is the machine's, whatever the target: only the others are
	// not to be called busy (beside stress-ng the steal was 5.8% and rightly said).
	b := r.Busy(DefaultThresholds)
	if strings.Contains(b, "other processes") {
		t.Errorf("Busy = %q for others that include the target, want no other processes named", b)
	}
	if r.Steps[0].StealPct <= DefaultThresholds.StealPct && b != "" {
		t.Errorf("Busy = %q with steal %.1f%% and others that include the target, want \"\"", b, r.Steps[0].StealPct)
	}
	// A failed step (nil) is not recorded.
	s.Begin("c=2", 0)(nil)
	if n := len(s.Record().Steps); n != 1 {
		t.Errorf("after a failed step: %d steps, want 1", n)
	}
}

// The generator read from /proc matches what other sources say: the CPU count of
// /proc/cpuinfo, uname -r, and GOMAXPROCS.
func TestReadGenerator(t *testing.T) {
	g := ReadGenerator("v1.2.3", 2)
	info, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skipf("no /proc/cpuinfo: %v", err)
	}
	if n := strings.Count(string(info), "processor\t:"); n > 0 && g.CPUs != n {
		t.Errorf("CPUs = %d, /proc/cpuinfo lists %d processors", g.CPUs, n)
	}
	if g.CPUModel == "" || !strings.Contains(string(info), g.CPUModel) {
		t.Errorf("CPUModel = %q, not found in /proc/cpuinfo", g.CPUModel)
	}
	if out, err := exec.Command("uname", "-r").Output(); err == nil && g.Kernel != strings.TrimSpace(string(out)) {
		t.Errorf("Kernel = %q, uname -r says %q", g.Kernel, strings.TrimSpace(string(out)))
	}
	if g.GOMAXPROCS != runtime.GOMAXPROCS(0) || g.GoVersion != runtime.Version() || g.Apiperf != "v1.2.3" || g.Threads != 2 {
		t.Errorf("ReadGenerator = %+v, want GOMAXPROCS %d, %s, apiperf v1.2.3, 2 threads", g, runtime.GOMAXPROCS(0), runtime.Version())
	}
	if g.Load[0] < 0 || (g.Load == [3]float64{}) {
		t.Errorf("Load = %v: /proc/loadavg not read (this machine runs the test: it is never all zero)", g.Load)
	}
	if !strings.Contains(g.String(), g.CPUModel) || !strings.Contains(g.String(), "v1.2.3") {
		t.Errorf("String() = %q lacks the CPU model or the version", g.String())
	}
}

// Begin and its end may be called for steps of several levels one after the other; the
// session's Record is safe to read between them.
func TestSessionSteps(t *testing.T) {
	s := NewSession(Generator{}, nil)
	s.Interval = 50 * time.Millisecond
	var wg sync.WaitGroup
	for i, label := range []string{"c=1", "c=2", "c=2"} {
		end := s.Begin(label, i/2)
		time.Sleep(120 * time.Millisecond)
		wg.Add(1)
		go func() { defer wg.Done(); _ = s.Record() }()
		end(&measure.Step{})
	}
	wg.Wait()
	r := s.Record()
	if len(r.Steps) != 3 || r.Step("c=2", 1) == nil || r.Step("c=3", 0) != nil || r.Version != Version {
		t.Errorf("Record = %+v: want 3 steps, c=2 #2 among them, version %d", r, Version)
	}
}
