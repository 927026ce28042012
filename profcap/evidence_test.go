package profcap

import (
	"testing"
	"time"
)

// A level's rise is with time at its load, past the ramp, trough to trough: a heap that fills
// while the level's requests come in and then saws up and down with the collector did not
// rise; one whose troughs climb did.
func TestEndAndRise(t *testing.T) {
	series := func(vs ...float64) *Series {
		s := &Series{}
		for i := range vs {
			s.Points = append(s.Points, Point{Offset: time.Duration(i) * 250 * time.Millisecond, HeapInuseBytes: &vs[i]})
		}
		return s
	}
	w := &Summary{From: 0, To: 10 * time.Second}
	heap := func(p Point) *float64 { return p.HeapInuseBytes }
	const mib = 1 << 20
	// ramp 4 -> 20 MiB, then the collector's saw between 12 and 24 MiB
	end, rise := endAndRise(series(4*mib, 20*mib, 12*mib, 24*mib, 13*mib, 22*mib, 12*mib, 23*mib), w, heap)
	if end != 23*mib || rise > 1*mib {
		t.Errorf("sawtooth at a constant load: end %.0f MiB, rise %.1f MiB, want 23 and at most 1", end/mib, rise/mib)
	}
	// a leak: every trough higher
	_, rise = endAndRise(series(4*mib, 10*mib, 8*mib, 16*mib, 14*mib, 22*mib, 20*mib, 28*mib), w, heap)
	if rise < 5*mib {
		t.Errorf("climbing troughs: rise %.1f MiB, want at least 5", rise/mib)
	}
	// three samples a level (1 s apart): the first, before the ramp, is left out
	if _, rise = endAndRise(series(4*mib, 20*mib, 21*mib), w, heap); rise != 1*mib {
		t.Errorf("three samples: rise %.1f MiB, want 1 (past the ramp)", rise/mib)
	}
}
