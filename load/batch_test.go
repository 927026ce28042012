package load

import (
	"testing"

	"github.com/apiperf/apiperf/measure"
)

// TestBatchExtras: a sample gets an Extra only when it has a trace id or Server-Timing, the
// batch makes its Extras when the first one needs it, and each slot has its own.
func TestBatchExtras(t *testing.T) {
	rec := measure.NewRecorder(measure.DefaultExpected(), false, 0)
	b := newSampleBatch(rec, 4)
	var none measure.Timings
	var s measure.Sample
	b.extras(&s, measure.TraceID{}, &none)
	if s.X != nil || b.extra != nil {
		t.Fatalf("a sample with neither trace id nor Server-Timing: X %v, batch extras %v; want none made", s.X, b.extra)
	}
	b.add(s)
	var timed measure.Timings
	timed.Add(rec.Metric([]byte("db")), 2)
	b.extras(&s, measure.TraceID{}, &timed)
	if s.X != &b.extra[1] || s.X.Timing != timed {
		t.Fatalf("with Server-Timing: X %p (batch slot 1 at %p), timing %+v; want slot 1 holding %+v", s.X, &b.extra[1], s.X, timed)
	}
	b.add(s)
	tr := measure.TraceID{1}
	b.extras(&s, tr, &none)
	if s.X != &b.extra[2] || s.X.Trace != tr || !s.X.Timing.Empty() || b.extra[1].Timing != timed {
		t.Errorf("with a trace id: X %+v in slot 2, slot 1 %+v; want the id alone, slot 1 untouched", s.X, b.extra[1])
	}
}
