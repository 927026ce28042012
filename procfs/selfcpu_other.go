//go:build !unix

package procfs

import "time"

// SelfCPU is unknown here.
func SelfCPU() (time.Duration, bool) { return 0, false }
