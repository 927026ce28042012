//go:build unix

package procfs

import (
	"syscall"
	"time"
)

// SelfCPU is the user and system CPU time of this process so far (getrusage, nanoseconds;
// /proc/PID/stat counts 10 ms ticks), and whether it is known.
func SelfCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
