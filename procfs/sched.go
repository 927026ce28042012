package procfs

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Sched is what the scheduler counted for a process's threads, from
// /proc/PID/task/*/schedstat (its own nanosecond clock, where /proc/PID/stat counts 10 ms
// ticks). Threads that have exited are not counted: it suits a Go process, whose threads
// live as long as it does, for differences over a short window.
type Sched struct {
	// Run is the time its threads spent on a CPU.
	Run time.Duration
	// Wait is the time its threads spent runnable on a run queue, waiting for a CPU: CPU
	// the process wanted and did not get.
	Wait time.Duration
}

// ReadSched sums the scheduler's run and wait times over the threads of process pid.
func ReadSched(pid int) (Sched, error) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil || len(tasks) == 0 {
		return Sched{}, fmt.Errorf("reading the scheduler times of process %d: no %s/*/schedstat", pid, dir)
	}
	var s Sched
	var buf [256]byte
	for _, t := range tasks {
		name := dir + "/" + t.Name() + "/schedstat"
		b, err := readSmall(name, buf[:])
		if err != nil {
			continue // the thread exited since the listing
		}
		f := strings.Fields(string(b))
		if len(f) < 2 {
			return Sched{}, fmt.Errorf("reading the scheduler times of process %d: malformed %s: %q", pid, name, snippet(b))
		}
		run, err1 := strconv.ParseInt(f[0], 10, 64)
		wait, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil {
			return Sched{}, fmt.Errorf("reading the scheduler times of process %d: bad %s: %q", pid, name, snippet(b))
		}
		s.Run += time.Duration(run)
		s.Wait += time.Duration(wait)
	}
	return s, nil
}
