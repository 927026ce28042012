package profcap

import (
	"os"
	"testing"
	"time"
)

// TaskCPU of this process grows by the CPU a busy loop burns, as the 10 ms ticks of
// /proc/PID/stat count it.
func TestTaskCPU(t *testing.T) {
	pid := os.Getpid()
	before, err := TaskCPU(pid)
	if err != nil {
		t.Fatal(err)
	}
	stat0, err := ReadProc(pid)
	if err != nil {
		t.Fatal(err)
	}
	// Spin until /proc/PID/stat (the independent source) has counted 200 ms of CPU, not for
	// 200 ms of wall time: on a busy machine a loop of 200 ms may get only a few ms of CPU.
	x := 1
	var stat1 ProcStat
	for deadline := time.Now().Add(time.Minute); ; {
		for range 100000 {
			x = x*31 + 7
		}
		if stat1, err = ReadProc(pid); err != nil {
			t.Fatal(err)
		}
		if stat1.CPU-stat0.CPU >= 200*time.Millisecond || time.Now().After(deadline) {
			break
		}
	}
	after, err := TaskCPU(pid)
	if err != nil {
		t.Fatal(err)
	}
	got, ticks := after-before, stat1.CPU-stat0.CPU
	if ticks < 200*time.Millisecond {
		t.Fatalf("a busy loop got %v of CPU in a minute, by /proc/PID/stat", ticks)
	}
	// TaskCPU is read after the last tick count, so it may be a little ahead of it; the 10 ms
	// ticks and threads that exited (counted by stat, not by the tasks) make up the rest.
	if (got - ticks).Abs() > 60*time.Millisecond {
		t.Errorf("TaskCPU grew by %v over a busy loop (x=%d); /proc/PID/stat by %v: want them within 60 ms", got, x, ticks)
	}
	if _, err := TaskCPU(1 << 30); err == nil {
		t.Error("TaskCPU of a process that does not exist: no error")
	}
}
