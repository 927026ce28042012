package procfs

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/internal/testenv"
)

// ReadMachine counts the CPUs the kernel says are online, and the machine's busy cores over
// a second in which a child spins are at least the child's CPU, read from its own /proc
// entry, and at most every CPU.
func TestReadMachine(t *testing.T) {
	online, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		t.Skipf("no CPU list to check against: %v", err)
	}
	m0, err := ReadMachine()
	if err != nil {
		t.Fatal(err)
	}
	if want := countCPUList(strings.TrimSpace(string(online))); m0.CPUs != want {
		t.Errorf("ReadMachine CPUs = %d, /sys/devices/system/cpu/online %q has %d", m0.CPUs, online, want)
	}
	pid := testenv.BusyChild(t)
	c0, err := Read(pid)
	if err != nil {
		t.Fatal(err)
	}
	m0, _ = ReadMachine()
	time.Sleep(time.Second)
	m1, err := ReadMachine()
	if err != nil {
		t.Fatal(err)
	}
	c1, err := Read(pid)
	if err != nil {
		t.Fatal(err)
	}
	use := m1.Since(m0)
	// The child's CPU is read outside the machine's window: allow its ticks on top.
	child := (c1.CPU - c0.CPU).Seconds()
	t.Logf("machine over 1 s with a spinning child: %v; the child %.2f cores", use, child)
	if use.CPUs != m0.CPUs {
		t.Errorf("Since CPUs = %d, want %d", use.CPUs, m0.CPUs)
	}
	if use.Busy < child-0.1 || use.Busy > float64(use.CPUs)+0.01 {
		t.Errorf("machine busy %.2f cores while a child used %.2f of %d: want between", use.Busy, child, use.CPUs)
	}
	if use.Steal < 0 || use.StealShare() > 1 {
		t.Errorf("steal %.2f cores (share %.2f): out of range", use.Steal, use.StealShare())
	}
	if o := use.Others(child, 100); o != 0 {
		t.Errorf("Others of more than was busy = %v, want 0", o)
	}
}

// The aggregate line's guest time is already in user: it is not counted twice; iowait is
// idle and steal is apart.
func TestParseMachine(t *testing.T) {
	const stat0 = "cpu  100 10 50 1000 20 5 5 0 40 0\ncpu0 50 5 25 500 10 2 3 0 20 0\ncpu1 50 5 25 500 10 3 2 0 20 0\nintr 1\n"
	// One second later on 2 CPUs (200 ticks): +100 user of which 30 guest, +20 system,
	// +10 steal, +50 idle, +20 iowait.
	const stat1 = "cpu  200 10 70 1050 40 5 5 10 70 0\ncpu0 100 5 35 525 20 2 3 5 35 0\ncpu1 100 5 35 525 20 3 2 5 35 0\n"
	m0, err := parseMachine([]byte(stat0))
	if err != nil {
		t.Fatal(err)
	}
	m1, err := parseMachine([]byte(stat1))
	if err != nil {
		t.Fatal(err)
	}
	if m0.CPUs != 2 || m0.Busy != 1700*time.Millisecond || m0.Idle != 10200*time.Millisecond {
		t.Errorf("parseMachine = %+v, want 2 CPUs, busy 1.7 s, idle 10.2 s", m0)
	}
	u := m1.Since(m0)
	// 120 busy, 10 steal of 200 ticks on 2 CPUs: 1.2 and 0.1 cores.
	if !within(u.Busy, 1.2, 0.1) || !within(u.Steal, 0.1, 0.1) || u.StealShare() != 0.05 {
		t.Errorf("Since = %+v (steal share %v), want 1.2 busy and 0.1 stolen cores, share 0.05", u, u.StealShare())
	}
	if got := u.Others(0.5, 0.2); !within(got, 0.5, 0.1) {
		t.Errorf("Others(0.5, 0.2) = %v, want 0.5", got)
	}
	if _, err := parseMachine([]byte("intr 1\n")); err == nil {
		t.Error("parseMachine without a cpu line: no error")
	}
	if _, err := parseMachine([]byte("cpu 1 2 x 4 5 6 7\n")); err == nil {
		t.Error("parseMachine with a bad field: no error")
	}
	if u := m0.Since(m0); u.Busy != 0 || u.CPUs != 2 {
		t.Errorf("Since of the same reading = %+v, want 0 busy of 2 CPUs", u)
	}
}
