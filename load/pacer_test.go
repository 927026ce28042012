package load

import (
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
)

func TestPacerDue(t *testing.T) {
	cases := []struct {
		rate float64
		i    int64
		want time.Duration
	}{
		{1000, 0, 0},                        // the first request is due at the start
		{1000, 1, time.Millisecond},         // steady: 1/rate apart
		{1000, 1000, time.Second},           // one second in
		{2.5, 1, 400 * time.Millisecond},    // fractional rates
		{0.5, 3, 6 * time.Second},           // below one per second
		{3, 1, 333333333 * time.Nanosecond}, // rounding to the nearest nanosecond
		{3, 3, time.Second},                 // no drift after a whole second
		{1e6, 1e6, time.Second},             // high rates stay exact
	}
	for _, c := range cases {
		if got := (Pacer{Rate: c.rate}).Due(c.i); got != c.want {
			t.Errorf("Pacer{%v}.Due(%d) = %v, want %v", c.rate, c.i, got, c.want)
		}
	}
}

func TestPacerCount(t *testing.T) {
	cases := []struct {
		rate float64
		at   time.Duration
		want int64
	}{
		{100, -time.Second, 0},         // before the start nothing is due
		{100, 0, 1},                    // request 0 is due at once
		{100, 9 * time.Millisecond, 1}, // the next is due at 10 ms
		{100, 10 * time.Millisecond, 2},
		{100, time.Second, 101}, // catch-up after a pause: everything due by then, at once
		{2.5, time.Second, 3},   // 0, 0.4 s and 0.8 s
		{3, time.Second, 4},     // 0, 1/3, 2/3 and 1 s: the float edge is counted exactly
	}
	for _, c := range cases {
		if got := (Pacer{Rate: c.rate}).Count(c.at); got != c.want {
			t.Errorf("Pacer{%v}.Count(%v) = %d, want %d", c.rate, c.at, got, c.want)
		}
	}
}

func TestLateWarning(t *testing.T) {
	cases := []struct {
		name                  string
		late, busy, scheduled int64
		starved, poolFull     bool
		limited               bool
		want                  string // a part of the warning; "" for none
	}{
		{"under 1% late: no warning", 9, 9, 1000, false, false, false, ""},
		{"late with free connections: the generator woke late", 50, 0, 1000, false, false, false, "woke late"},
		{"late for want of a connection", 50, 40, 1000, false, false, false, "every connection was busy for 40"},
		{"busy and the pool at its limit", 50, 40, 1000, false, true, false, "--max-connections was reached"},
		{"short of CPU, busy: the pool does not grow then", 50, 40, 1000, true, false, false, "and it opens no connection while it is"},
		{"short of CPU, connections free", 50, 0, 1000, true, false, false, "short of CPU (goroutines waited over 1ms to run); "},
		{"busy and the machine could open no more", 50, 40, 1000, false, false, true, "apiperf's own machine could not open more"},
	}
	// A schedule the generator fell behind: what it sent, and what it never sent, apart.
	short := lateWarning(&measure.OpenLoop{LateSends: 269180, Sent: 269413, Scheduled: 400000, MaxLag: measure.Duration(10405381 * time.Microsecond)}, 0, true, false, false)
	if want := "269180 of the 269413 requests sent were sent more than 1ms late (max lag 10.405s), and 130587 of the 400000 due in the window were never sent"; !strings.Contains(short, want) {
		t.Errorf("lateWarning of a schedule fallen behind = %q, want it to say %q", short, want)
	}
	for _, c := range cases {
		got := lateWarning(&measure.OpenLoop{LateSends: c.late, Scheduled: c.scheduled}, c.busy, c.starved, c.poolFull, c.limited)
		switch {
		case c.want == "" && got != "":
			t.Errorf("%s: lateWarning = %q, want none", c.name, got)
		case c.want != "" && !strings.Contains(got, c.want):
			t.Errorf("%s: lateWarning = %q, want it to say %q", c.name, got, c.want)
		case c.busy == 0 && strings.Contains(got, "every connection was busy"):
			t.Errorf("%s: lateWarning = %q blames busy connections that were free", c.name, got)
		}
	}
}
