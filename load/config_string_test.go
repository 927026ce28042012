package load

import (
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
)

func TestConfigStringPlurals(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		// one of everything: no "1 threads"
		{Config{Connections: 1, Threads: 1, Requests: 1, Timeout: measure.Duration(time.Second)}, "closed loop: 1 connection on 1 thread, 1 request, timeout 1s"},
		{Config{Connections: 10, Threads: 2, Duration: measure.Duration(10 * time.Second), Timeout: measure.Duration(2 * time.Second)}, "closed loop: 10 connections on 2 threads for 10s, timeout 2s"},
		{Config{Rate: 500, Connections: 1, Threads: 1, Duration: measure.Duration(time.Second), Timeout: measure.Duration(time.Second)}, "open loop: 500 req/s over 1 connection (up to 10000) on 1 thread for 1s, timeout 1s"},
	} {
		if got := tc.cfg.String(); got != tc.want {
			t.Errorf("Config.String() = %q; want %q", got, tc.want)
		}
	}
}
