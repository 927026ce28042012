package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// Pin sets the CPU affinity of every thread of process pid (0: this process) to cpus and
// returns a function that gives its threads back their previous affinity (threads made since
// get the main thread's). Threads made later inherit the affinity of the thread that makes
// them, so a Go process stays pinned.
// Timing tests pin a load generator and its target to separate CPUs, so that which core
// the scheduler happens to put each on does not become part of what they measure.
func Pin(pid int, cpus ...int) (restore func(), err error) {
	if pid == 0 {
		pid = os.Getpid()
	}
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	if err != nil || len(tasks) == 0 {
		return nil, fmt.Errorf("pinning process %d: no threads under /proc/%d/task", pid, pid)
	}
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	prev := map[int]unix.CPUSet{}
	var main unix.CPUSet
	if err := unix.SchedGetaffinity(pid, &main); err != nil {
		return nil, fmt.Errorf("pinning process %d: %w", pid, err)
	}
	restore = func() {
		now, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
		for _, dir := range now {
			tid, err := strconv.Atoi(filepath.Base(dir))
			if err != nil {
				continue
			}
			s, ok := prev[tid]
			if !ok {
				s = main
			}
			unix.SchedSetaffinity(tid, &s) // a thread that has exited needs nothing back
		}
	}
	for _, dir := range tasks {
		tid, err := strconv.Atoi(filepath.Base(dir))
		if err != nil {
			continue
		}
		var old unix.CPUSet
		if err := unix.SchedGetaffinity(tid, &old); err != nil {
			continue // exited since the glob
		}
		if err := unix.SchedSetaffinity(tid, &set); err != nil {
			restore()
			return nil, fmt.Errorf("pinning thread %d of process %d to CPUs %v: %w", tid, pid, cpus, err)
		}
		prev[tid] = old
	}
	return restore, nil
}
