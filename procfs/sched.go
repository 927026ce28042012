package procfs

import (
	"fmt"
	"time"
	"unsafe"
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
	sc := getScratch()
	defer putScratch(sc)
	dir := procPath(sc.dir[:0], pid, "/task")
	var s Sched
	var bad error
	threads, err := eachEntry(dir, sc.dents[:], func(tid []byte) bool {
		p := append(append(append(append(sc.path[:0], dir...), '/'), tid...), "/schedstat"...)
		b, err := readSmall(unsafe.String(unsafe.SliceData(p), len(p)), sc.data[:256])
		if err != nil {
			return true // the thread exited since the listing
		}
		run, err1 := decInt(field(b, 0))
		wait, err2 := decInt(field(b, 1))
		if err1 != nil || err2 != nil {
			bad = fmt.Errorf("reading the scheduler times of process %d: malformed %s: %q", pid, p, snippet(b))
			return false
		}
		s.Run += time.Duration(run)
		s.Wait += time.Duration(wait)
		return true
	})
	switch {
	case bad != nil:
		return Sched{}, bad
	case err != nil || threads == 0:
		return Sched{}, fmt.Errorf("reading the scheduler times of process %d: no %s/*/schedstat", pid, dir)
	}
	return s, nil
}
