package result

import (
	"github.com/apiperf/apiperf/exectrace"
	"github.com/apiperf/apiperf/profcap"
	"github.com/apiperf/apiperf/verdict"
)

// traceOf is what the verdict reads of a level's execution trace: the last capture that
// kept one, with the cores the target may use when /proc sampled its affinity.
func traceOf(caps []*profcap.StepRecord) *verdict.Trace {
	var ts *profcap.StepRecord
	for _, c := range caps {
		if c.Trace != nil && c.Trace.Summary != nil {
			ts = c
		}
	}
	if ts == nil {
		return nil
	}
	s := ts.Trace.Summary
	t := &verdict.Trace{GOMAXPROCS: s.GOMAXPROCS, BusyPs: s.BusyPs,
		SchedP50: s.Sched.P50, SchedP99: s.Sched.P99, GCPerSecond: s.GCPerSecond(),
		STWTotal: s.STWTotal, STWMax: s.STWMax, STWStopping: s.STWStopping, STWWorkMax: s.STWWorkMax, GCCPUPct: s.GCCPUPct(), AssistPct: s.AssistPct(), Assist: s.GCAssist, Span: s.Span}
	if ts.Process != nil && ts.Process.Cores > 0 {
		t.Cores = float64(ts.Process.Cores)
	}
	if g := s.Group(exectrace.GroupAssist); g != nil && len(g.Stacks) > 0 {
		t.AssistSite = g.Stacks[0].Function()
	}
	return t
}
