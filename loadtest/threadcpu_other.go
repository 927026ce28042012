//go:build !linux

package loadtest

import "time"

// threadCPU is unknown here: the handler's CPU is the process's minus the baseline's.
func threadCPU() (time.Duration, bool) { return 0, false }
