//go:build !unix

package loadtest

import "time"

// processCPU is unknown here: the handler's CPU per request is reported as 0.
func processCPU() (time.Duration, bool) { return 0, false }
