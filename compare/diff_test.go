package compare

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/sweep"
)

// step is a synthetic fixture: n responses over 1 s, all at latency lat, fails of them 500s.
func step(c int, n int64, lat time.Duration, fails int64) *measure.Step {
	s := &measure.Step{Concurrency: c, Elapsed: measure.Duration(time.Second), Requests: n, Attempts: n,
		Successes: n - fails, Status: map[int]int64{200: n - fails}, Latency: measure.NewHistogram()}
	if fails > 0 {
		s.Status[500] = fails
		s.Errors.Status = fails
	}
	s.Latency.RecordN(lat, n)
	return s
}

func run(steps ...*measure.Step) *result.Run {
	return &result.Run{Version: 1, Kind: result.KindSweep, Steps: steps}
}

func TestFromRun(t *testing.T) {
	r := run(step(100, 3000, 10*time.Millisecond, 0), step(10, 1000, time.Millisecond, 0), step(100, 5000, 30*time.Millisecond, 80))
	s := FromRun("a", r)
	if len(s.Levels) != 2 || s.Levels[0].Value != 10 || s.Levels[1].Value != 100 {
		t.Fatalf("FromRun levels = %+v, want 10 then 100 (sorted, repetitions pooled)", s.Levels)
	}
	l := s.Levels[1]
	if l.Reps != 2 || l.QPS != 4000 {
		t.Errorf("level: reps %d QPS %v, want 2 reps and the median QPS 4000", l.Reps, l.QPS)
	}
	if want := 100 * 7920.0 / 8000; math.Abs(l.Success-want) > 1e-9 || l.Classic != 100 {
		t.Errorf("pooled success %v classic %v, want %v and 100 (500s are classic successes)", l.Success, l.Classic, want)
	}
	if p99 := l.Millis(l.P99); p99 < 29 || p99 > 31 || l.Status[500] != 80 {
		t.Errorf("pooled p99 %vms status %v, want ~30ms and 80 500s", p99, l.Status)
	}
}

func TestDiffAlignsByValue(t *testing.T) {
	a := FromRun("before", run(step(10, 1000, time.Millisecond, 0), step(50, 4000, 2*time.Millisecond, 0), step(100, 5000, 8*time.Millisecond, 0)))
	b := FromRun("after", run(step(10, 2000, time.Millisecond, 0), step(100, 8000, 4*time.Millisecond, 0), step(200, 10000, 20*time.Millisecond, 0)))
	d := New(a, b)
	tests := []struct {
		row          int
		label        string
		qpsRatio     float64 // NaN: a side is missing
		haveA, haveB bool
	}{
		{0, "10", 0.5, true, true},            // both measured 10
		{1, "50", math.NaN(), true, false},    // only A measured 50: a gap, not a shift
		{2, "100", 5000.0 / 8000, true, true}, // 100 is compared with 100, not with B's second row
		{3, "200", math.NaN(), false, true},   // only B measured 200
	}
	if len(d.Rows) != len(tests) {
		t.Fatalf("New gave %d rows, want %d", len(d.Rows), len(tests))
	}
	for _, tt := range tests {
		r := d.Rows[tt.row]
		got := r.QPSRatio()
		if r.Label != tt.label || (r.A != nil) != tt.haveA || (r.B != nil) != tt.haveB ||
			!(got == tt.qpsRatio || math.IsNaN(got) && math.IsNaN(tt.qpsRatio)) {
			t.Errorf("row %d = %s A:%v B:%v ratio %v, want %s A:%v B:%v ratio %v", tt.row, r.Label, r.A != nil, r.B != nil, got, tt.label, tt.haveA, tt.haveB, tt.qpsRatio)
		}
	}
	if got := d.Rows[2].P99Ratio(); got < 1.9 || got > 2.1 {
		t.Errorf("p99 ratio at 100 = %v, want ~2 (8ms vs 4ms)", got)
	}
	want := "before's peak QPS is 50.00% of after's (5000.00 at c=100 vs 10000.00 at c=200)"
	if h := d.Headline(); h != want {
		t.Errorf("Headline() = %q, want %q", h, want)
	}
	if len(d.Warnings) != 2 || !strings.Contains(d.Warnings[0], "[50]") || !strings.Contains(d.Warnings[1], "[200]") {
		t.Errorf("warnings = %q, want the levels only one side measured", d.Warnings)
	}
}

func TestDiffSuccessView(t *testing.T) {
	a := FromRun("a", run(step(10, 1000, time.Millisecond, 100)))
	classic := Side{Name: "old", Classic: true, Levels: []sweep.Level{{Value: 10, Label: "c=10", QPS: 900, Partial: true, Mean: -1, Classic: 100}}}
	tests := []struct {
		name string
		b    Side
		want float64 // A's success as the diff compares it
	}{
		{"run vs run uses apiperf's success", FromRun("b", run(step(10, 1000, time.Millisecond, 0))), 90},
		{"run vs .dat falls back to the classic figure on both sides", classic, 100},
	}
	for _, tt := range tests {
		d := New(a, tt.b)
		if got := d.Success(d.Rows[0].A); got != tt.want {
			t.Errorf("%s: Success(A) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestDiffRateVsConcurrency(t *testing.T) {
	open := run(step(10, 1000, time.Millisecond, 0))
	open.Load = load.Config{Rate: 1000}
	d := New(FromRun("a", open), FromRun("b", run(step(10, 1000, time.Millisecond, 0))))
	if len(d.Warnings) == 0 || !strings.Contains(d.Warnings[0], "not comparable") {
		t.Errorf("warnings = %q, want a rate-vs-concurrency warning", d.Warnings)
	}
}

func TestHeadlineEmptySide(t *testing.T) {
	d := New(Side{Name: "a"}, FromRun("b", run(step(10, 1000, time.Millisecond, 0))))
	if h := d.Headline(); !strings.Contains(h, "cannot be compared") || !math.IsNaN(d.PeakRatio()) {
		t.Errorf("Headline() = %q, PeakRatio %v; want a cannot-compare line and NaN", h, d.PeakRatio())
	}
}
