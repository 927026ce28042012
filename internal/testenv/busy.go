package testenv

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BusyChild starts a shell spinning on one core and returns its pid; it is killed at cleanup.
func BusyChild(t testing.TB) int {
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

// ThreadCPU is the time the main thread of pid has spent on a CPU, from /proc/PID/schedstat:
// for a single-threaded child, an independent check of what the code under test reads.
func ThreadCPU(t testing.TB, pid int) time.Duration {
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
