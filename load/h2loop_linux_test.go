//go:build linux

package load

import "testing"

// HTTP/2 runs on the event loops by default, so every HTTP/2 test covers them; these tests
// run again on a goroutine per connection (APIPERF_IO=goroutines, the path of systems without
// the loops), and each path is checked to be the one taken.
func TestH2Paths(t *testing.T) {
	tests := []struct {
		name string
		f    func(*testing.T)
	}{
		{"exact count, h2c and h2", TestH2ExactCountGoServer},
		{"bodies, headers, statuses", TestH2BodiesHeadersAndStatus},
		{"GOAWAY mid-run", TestH2GoAwayMidRun},
		{"stalled stream times out", TestH2StalledStreamTimesOut},
		{"open loop", TestH2OpenLoop},
		{"open loop timeouts", TestH2OpenLoopTimeouts},
		{"open loop grows its pool", TestH2OpenLoopGrowsPool},
		{"gRPC unary", TestGRPCUnaryCountsByStatus},
	}
	defer func() { h2TestOpts = nil }()
	for _, mode := range []struct {
		name  string
		opts  []Option
		loops bool
	}{{"event loops", nil, true}, {"goroutines", []Option{withIO(ioGoroutines)}, false}} {
		h2TestOpts = mode.opts
		for _, tc := range tests {
			t.Run(mode.name+"/"+tc.name, func(t *testing.T) {
				before := h2LoopCoros.Load()
				tc.f(t)
				if on := h2LoopCoros.Load() > before; on != mode.loops {
					t.Errorf("connections on the HTTP/2 event loops: %v, want %v", on, mode.loops)
				}
			})
		}
	}
}
