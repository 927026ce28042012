package profcap

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestRequestWithin(t *testing.T) {
	const s = time.Second
	tests := []struct {
		name          string
		cpu, window   time.Duration
		wantCPU       time.Duration
		wantCPUAfter  time.Duration
		wantSnapAfter time.Duration
		wantNote      string
	}{
		// a long window: 1 s settle, the asked 5 s fit, snapshots 500 ms before the end.
		{"long window", 5 * s, 30 * s, 5 * s, s, 29500 * time.Millisecond, ""},
		// the asked CPU time is cut to what fits: 10s - 1s settle - margin leaves 8 whole seconds.
		{"cut to fit", time.Hour, 10 * s, 8 * s, s, 9500 * time.Millisecond, ""},
		// a 2 s window: settle is a fifth (400 ms), one second fits, snapshot at 1.8 s.
		{"short window", time.Hour, 2 * s, s, 400 * time.Millisecond, 1800 * time.Millisecond, ""},
		// a 1 s window cannot hold a 1 s profile after settling: skipped with a note.
		{"too short", time.Hour, s, 0, 200 * time.Millisecond, 900 * time.Millisecond, "no 1s profile fits"},
		// no CPU asked: only the snapshot time is set.
		{"no cpu", 0, 10 * s, 0, 0, 9500 * time.Millisecond, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, note := Request{Base: "http://127.0.0.1:1/debug/pprof", CPU: tt.cpu, Heap: true}.Within(tt.window)
			if r.CPU != tt.wantCPU || r.CPUAfter != tt.wantCPUAfter || r.SnapshotAfter != tt.wantSnapAfter {
				t.Errorf("Within(%v) = cpu %v after %v, snapshot after %v; want cpu %v after %v, snapshot after %v",
					tt.window, r.CPU, r.CPUAfter, r.SnapshotAfter, tt.wantCPU, tt.wantCPUAfter, tt.wantSnapAfter)
			}
			if (tt.wantNote == "") != (note == "") || !strings.Contains(note, tt.wantNote) {
				t.Errorf("Within(%v) note = %q, want one containing %q", tt.window, note, tt.wantNote)
			}
			if r.CPU > 0 && r.CPUAfter+r.CPU > tt.window {
				t.Errorf("CPU profile %v after %v ends past the %v window", r.CPU, r.CPUAfter, tt.window)
			}
		})
	}
}

func TestCaptureCancelledBeforeDelay(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	// The address is never dialled: the delay outlasts ctx.
	p, warns := Capture(ctx, Request{Base: "http://127.0.0.1:1/debug/pprof", Heap: true, SnapshotAfter: time.Minute}, nil)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Capture took %v after its context ended, want it to return promptly", took)
	}
	if p.Heap != nil || len(warns) != 1 || !strings.Contains(warns[0], "captured 0 of 1 profiles: heap: cancelled before it started") {
		t.Errorf("Capture = %+v, %q; want no heap and a 'cancelled before it started' warning", p, warns)
	}
}
