package cluster

import (
	"testing"
	"time"

	"github.com/apiperf/apiperf/load"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		name string
		cfg  load.Config
		n    int
		// want per-worker connections and requests
		conns []int
		reqs  []int64
	}{
		// the brief's case: exact thirds
		{"even", load.Config{Connections: 30, Requests: 30000}, 3, []int{10, 10, 10}, []int64{10000, 10000, 10000}},
		// remainders go to the first workers, totals stay exact
		{"remainder", load.Config{Connections: 10, Requests: 100}, 3, []int{4, 3, 3}, []int64{34, 33, 33}},
		// by duration: no request count to split
		{"duration", load.Config{Connections: 5, Duration: 1}, 2, []int{3, 2}, []int64{0, 0}},
	}
	for _, tt := range tests {
		shares, err := Split(tt.cfg, tt.n)
		if err != nil {
			t.Fatalf("%s: Split: %v", tt.name, err)
		}
		var c int
		var r int64
		for k, s := range shares {
			if s.Connections != tt.conns[k] || s.Requests != tt.reqs[k] {
				t.Errorf("%s: worker %d got c=%d n=%d, want c=%d n=%d", tt.name, k, s.Connections, s.Requests, tt.conns[k], tt.reqs[k])
			}
			c += s.Connections
			r += s.Requests
		}
		if c != tt.cfg.Connections || r != tt.cfg.Requests {
			t.Errorf("%s: totals c=%d n=%d, want c=%d n=%d", tt.name, c, r, tt.cfg.Connections, tt.cfg.Requests)
		}
	}
}

func TestSplitRefusesTooFew(t *testing.T) {
	if _, err := Split(load.Config{Connections: 2, Duration: 1}, 3); err == nil {
		t.Error("Split(c=2, 3 workers) = nil error, want a refusal")
	}
	if _, err := Split(load.Config{Connections: 3, Requests: 2}, 3); err == nil {
		t.Error("Split(n=2, 3 workers) = nil error, want a refusal")
	}
}

// TestSplitOpenLoopSchedule checks that the workers' schedules interleave into the
// combined one: worker k's request j is due when combined request k+j*n is.
func TestSplitOpenLoopSchedule(t *testing.T) {
	cfg := load.Config{Connections: 3, Rate: 3000, Requests: 10}
	shares, _ := Split(cfg, 3)
	off := Offsets(cfg, 3)
	all := load.Pacer{Rate: cfg.Rate}
	for k, s := range shares {
		p := load.Pacer{Rate: s.Rate}
		for j := int64(0); j < s.Requests; j++ {
			got := plainDuration(off[k]) + p.Due(j)
			want := all.Due(int64(k) + j*3)
			if d := got - want; d < -time.Microsecond || d > time.Microsecond {
				t.Errorf("worker %d request %d due %v, combined request %d due %v", k, j, got, int64(k)+j*3, want)
			}
		}
	}
}
