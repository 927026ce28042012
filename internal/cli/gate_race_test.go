//go:build race

package cli

// Under the race detector the in-process load generator and target are slowed several
// times over, so their p99 measures the instrumentation more than a 2 ms delay.
func init() { gateRaceEnabled = true }
