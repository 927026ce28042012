package result

import (
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/sweep"
)

// TestVerdictInputGeneratorLimit: a generator-limited level reaches the verdict with its
// limit and fix, and with the load it could put in flight (the connections it opened), so
// Little's law is checked against those.
func TestVerdictInputGeneratorLimit(t *testing.T) {
	h := measure.NewHistogram()
	h.RecordN(10*time.Millisecond, 47500)
	s := &measure.Step{Label: "c=1000", Concurrency: 1000, Attempts: 47500, Requests: 47500, Successes: 47500, Elapsed: measure.Duration(time.Second), Latency: h,
		GeneratorLimit: &measure.GeneratorLimit{Errno: "EADDRNOTAVAIL", Resource: "local ports", Connections: 500, Wanted: 1000, Fix: "use --source"}}
	r := &Run{Steps: []*measure.Step{s}, Sweep: sweep.NewRecord(sweep.Plan{Levels: []int{1000}}, sweep.Objective{}, sweep.Rules{})}
	r.Sweep.Analyze(r.Steps)
	in, ok := r.VerdictInput()
	if !ok || len(in.Levels) != 1 {
		t.Fatalf("VerdictInput = %+v, %v; want one level", in, ok)
	}
	l := in.Levels[0]
	if l.Load != 500 || l.GeneratorFix != "use --source" || l.GeneratorLimit != s.GeneratorLimit.Detail() {
		t.Errorf("level: load %v, limit %q, fix %q; want 500 (the connections opened), the limit and its fix", l.Load, l.GeneratorLimit, l.GeneratorFix)
	}
	if v := r.Judge(); v == nil || len(v.Little) != 1 || !v.Little[0].OK {
		t.Errorf("Little's law at the limited level: %+v; want it consistent with the 500 connections in flight", v)
	}
}
