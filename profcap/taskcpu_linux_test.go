package profcap

import (
	"os"
	"testing"
	"time"
)

// TaskCPU of this process grows by about the CPU a busy loop burns, and agrees with the
// 10 ms ticks of /proc/PID/stat.
func TestTaskCPU(t *testing.T) {
	pid := os.Getpid()
	before, err := TaskCPU(pid)
	if err != nil {
		t.Fatal(err)
	}
	stat0, _ := ReadProc(pid)
	x := 1
	for end := time.Now().Add(200 * time.Millisecond); time.Now().Before(end); {
		for range 1000 {
			x = x*31 + 7
		}
	}
	after, err := TaskCPU(pid)
	if err != nil {
		t.Fatal(err)
	}
	stat1, _ := ReadProc(pid)
	got, ticks := after-before, stat1.CPU-stat0.CPU
	if got < 20*time.Millisecond || got > 2*time.Second || (got-ticks).Abs() > 60*time.Millisecond {
		t.Errorf("TaskCPU grew by %v over a 200 ms busy loop (x=%d); /proc/PID/stat by %v: want more than 20 ms and within 60 ms of the ticks", got, x, ticks)
	}
	if _, err := TaskCPU(1 << 30); err == nil {
		t.Error("TaskCPU of a process that does not exist: no error")
	}
}
