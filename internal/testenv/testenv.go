// Package testenv gates tests whose assertions depend on timing: they run in `make test`'s
// serial pass (one package at a time, without the race detector), not in the parallel
// -race pass, where a 2-core machine cannot give a load generator steady CPU.
package testenv

import (
	"os"
	"testing"
)

// TimingEnv is set by `make timing` for the serial pass.
const TimingEnv = "APIPERF_TIMING"

// Timing skips t unless the serial timing pass is running.
func Timing(t testing.TB) {
	t.Helper()
	if os.Getenv(TimingEnv) == "" {
		t.Skipf("timing test: runs in the serial pass (make timing, %s=1), not alongside other packages", TimingEnv)
	}
	if raceEnabled {
		t.Skip("timing test: the race detector slows the generator too much for its bounds")
	}
}
