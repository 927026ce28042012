package testenv

import (
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestPin pins a child process to one CPU, and restore gives it its old affinity back.
func TestPin(t *testing.T) {
	var mine unix.CPUSet
	if err := unix.SchedGetaffinity(0, &mine); err != nil {
		t.Fatal(err)
	}
	cpu := runtime.NumCPU() - 1
	cmd := exec.Command("sleep", "5")
	if err := cmd.Start(); err != nil {
		t.Skipf("no sleep command: %v", err)
	}
	defer cmd.Process.Kill()
	restore, err := Pin(cmd.Process.Pid, cpu)
	if err != nil {
		t.Fatal(err)
	}
	var got unix.CPUSet
	if err := unix.SchedGetaffinity(cmd.Process.Pid, &got); err != nil || got.Count() != 1 || !got.IsSet(cpu) {
		t.Errorf("affinity after Pin(%d) = %d CPUs (cpu %d set: %v), err %v; want only CPU %d", cpu, got.Count(), cpu, got.IsSet(cpu), err, cpu)
	}
	restore()
	if err := unix.SchedGetaffinity(cmd.Process.Pid, &got); err != nil || got != mine {
		t.Errorf("affinity after restore = %d CPUs, err %v; want the %d it inherited", got.Count(), err, mine.Count())
	}
	if _, err := Pin(1<<30, 0); err == nil || !strings.Contains(err.Error(), "no threads") {
		t.Errorf("Pin(a pid that does not exist) = %v, want an error naming it", err)
	}
}
