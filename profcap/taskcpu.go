package profcap

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// TaskCPU is the CPU time process pid has used, in nanoseconds: the sum over its threads of
// the time on CPU from /proc/PID/task/*/schedstat (the scheduler's own clock, where
// /proc/PID/stat counts 10 ms ticks). Threads that have exited are not counted: it suits
// a Go server, whose threads live as long as it does, for differences over a short window.
func TaskCPU(pid int) (time.Duration, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		return 0, fmt.Errorf("reading the CPU time of process %d: no /proc/%d/task/*/schedstat", pid, pid)
	}
	var sum time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // the thread exited since the glob
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			continue
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("reading the CPU time of process %d: bad %s: %q", pid, t, snippet(b))
		}
		sum += time.Duration(ns)
	}
	return sum, nil
}
