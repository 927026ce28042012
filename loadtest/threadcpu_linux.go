package loadtest

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU is the CPU time (user and system) the calling thread has used, as the kernel's
// scheduler counts it (CLOCK_THREAD_CPUTIME_ID, nanoseconds).
func threadCPU() (time.Duration, bool) {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
