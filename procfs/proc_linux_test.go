package procfs

import (
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/internal/testenv"
)

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

// Read's CPU and RSS (what --target-pid shows) match schedstat and ps, read independently,
// within 5%.
func TestReadMatchesIndependentReads(t *testing.T) {
	pid := testenv.BusyChild(t)
	s0, err := Read(pid)
	if err != nil {
		t.Fatal(err)
	}
	c0 := testenv.ThreadCPU(t, pid)
	time.Sleep(1500 * time.Millisecond)
	s1, err := Read(pid)
	if err != nil {
		t.Fatal(err)
	}
	c1 := testenv.ThreadCPU(t, pid)
	got, want := (s1.CPU - s0.CPU).Seconds(), (c1 - c0).Seconds()
	t.Logf("CPU over 1.5 s: /proc/PID/stat %.3f s, schedstat %.3f s", got, want)
	// Ticks are 10 ms: allow them on top of 5%.
	if math.Abs(got-want) > 0.05*want+0.02 {
		t.Errorf("Read CPU delta = %.3f s, schedstat says %.3f s: more than 5%% apart", got, want)
	}
	rss, ps := float64(s1.RSSBytes), float64(psRSS(t, pid))
	t.Logf("RSS: Read %.0f B, ps %.0f B", rss, ps)
	if !within(rss, ps, 5) {
		t.Errorf("Read RSS = %.0f B, ps says %.0f B: more than 5%% apart", rss, ps)
	}
}

// ReadSched's run time of this process grows by the CPU a busy loop burns, as the 10 ms
// ticks of /proc/PID/stat count it.
func TestReadSchedRun(t *testing.T) {
	pid := os.Getpid()
	before, err := ReadSched(pid)
	if err != nil {
		t.Fatal(err)
	}
	stat0, err := Read(pid)
	if err != nil {
		t.Fatal(err)
	}
	// Spin until /proc/PID/stat (the independent source) has counted 200 ms of CPU, not for
	// 200 ms of wall time: on a busy machine a loop of 200 ms may get only a few ms of CPU.
	x := 1
	var stat1 Stat
	for deadline := time.Now().Add(time.Minute); ; {
		for range 100000 {
			x = x*31 + 7
		}
		if stat1, err = Read(pid); err != nil {
			t.Fatal(err)
		}
		if stat1.CPU-stat0.CPU >= 200*time.Millisecond || time.Now().After(deadline) {
			break
		}
	}
	after, err := ReadSched(pid)
	if err != nil {
		t.Fatal(err)
	}
	got, ticks := after.Run-before.Run, stat1.CPU-stat0.CPU
	if ticks < 200*time.Millisecond {
		t.Fatalf("a busy loop got %v of CPU in a minute, by /proc/PID/stat", ticks)
	}
	// ReadSched is read after the last tick count, so it may be a little ahead of it; the
	// 10 ms ticks and threads that exited (counted by stat, not by the tasks) make up the rest.
	if (got - ticks).Abs() > 60*time.Millisecond {
		t.Errorf("ReadSched run time grew by %v over a busy loop (x=%d); /proc/PID/stat by %v: want them within 60 ms", got, x, ticks)
	}
	if _, err := ReadSched(1 << 30); err == nil {
		t.Error("ReadSched of a process that does not exist: no error")
	}
}

// Two spinning children pinned to one CPU take turns: each waits for it about as long as it
// runs, and ReadSched counts that wait (Read's RunWait is the same figure).
func TestReadSchedWait(t *testing.T) {
	a, b := testenv.BusyChild(t), testenv.BusyChild(t)
	for _, pid := range []int{a, b} {
		if _, err := testenv.Pin(pid, 0); err != nil {
			t.Skipf("cannot pin the children: %v", err)
		}
	}
	s0, err := ReadSched(a)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	s1, err := ReadSched(a)
	if err != nil {
		t.Fatal(err)
	}
	run, wait := (s1.Run - s0.Run).Seconds(), (s1.Wait - s0.Wait).Seconds()
	t.Logf("a child sharing one CPU with another over 1 s: ran %.3f s, waited %.3f s", run, wait)
	// Other processes on the CPU only add to the wait; the two children split what is left.
	// Run and wait need not fill the second: at load 14 they came to 0.72 s of it (the time a
	// virtual machine's CPU is away counts as neither).
	if wait < 0.3 || run > 0.7 || run+wait < 0.6 {
		t.Errorf("ReadSched of a child sharing one CPU with another spinning child: ran %.3f s and waited %.3f s in 1 s; want a wait of at least 0.3 s", run, wait)
	}
	st, err := Read(a)
	if err != nil {
		t.Fatal(err)
	}
	if st.RunWait < s1.Wait {
		t.Errorf("Read's RunWait %v is less than ReadSched's Wait %v read before it", st.RunWait, s1.Wait)
	}
}

func TestCountCPUList(t *testing.T) {
	for s, want := range map[string]int{"0": 1, "0-1": 2, "0-3,6,8-9": 7, "": 0, "3-1": 0} {
		if got := countCPUList(s); got != want {
			t.Errorf("countCPUList(%q) = %d, want %d", s, got, want)
		}
	}
}
