package loadtest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apiperf/apiperf/sweep"
)

// Benchmark sends exactly b.N requests to t (Requests and Duration options are replaced by
// b.N) and reports, with b.ReportMetric, req/s, p50-ns, p99-ns and p999-ns, and for a
// Handler target the handler's CPU-ns/req, allocs/req and B/req (MeasureCost is implied), for a
// URL with TargetProcess its process's target-CPU-ns/req. The
// benchmark's timer runs only during the measured load, so ns/op is its wall time per
// request. It fails the benchmark when the load cannot run or no response came back.
func Benchmark(b *testing.B, t Target, opts ...Option) *Result {
	b.Helper()
	b.StopTimer()
	opts = append(opts, Duration(0), Requests(int64(b.N)), func(s *settings) {
		s.cost = t.handler != nil
		s.measuring = func() { b.ResetTimer(); b.StartTimer() }
		s.measured = b.StopTimer
	})
	res, err := Run(b.Context(), t, opts...)
	if err != nil {
		b.Fatalf("loadtest.Benchmark(%s): %v", t, err)
	}
	if res.Step().Requests == 0 {
		b.Fatalf("loadtest.Benchmark(%s): no response: %s", t, res)
	}
	b.ReportMetric(res.QPS(), "req/s")
	b.ReportMetric(float64(res.Percentile(50)), "p50-ns")
	b.ReportMetric(float64(res.Percentile(99)), "p99-ns")
	b.ReportMetric(float64(res.Percentile(99.9)), "p999-ns")
	if h := res.Handler; h != nil {
		b.ReportMetric(float64(h.Handler.CPU), "CPU-ns/req")
		b.ReportMetric(h.Handler.Allocs, "allocs/req")
		b.ReportMetric(h.Handler.Bytes, "B/req")
	}
	if cpu := res.TargetCPU(); cpu > 0 {
		b.ReportMetric(float64(cpu), "target-CPU-ns/req")
	}
	return res
}

// Check judges the result against objective, written as apiperf's --objective takes it
// ("p99<=20ms,errors<=0.1%"): nil when every term is met, else an error naming the summary
// line and each term missed. A load without responses, or one apiperf's own CPU bounded,
// never meets an objective.
func (r *Result) Check(objective string) error {
	o, err := sweep.ParseObjective(objective)
	if err != nil {
		return err
	}
	var missed []string
	for _, t := range o.Check(r.Level()) {
		if !t.Pass {
			missed = append(missed, t.Term+": "+t.Reason)
		}
	}
	if len(missed) == 0 {
		return nil
	}
	return fmt.Errorf("objective %s missed\n  %s\n  missed: %s", o, r, strings.Join(missed, "\n  missed: "))
}

// Assert loads t as opts say and fails the test (t.Error) when the result misses objective
// (see Result.Check), with the summary line and the terms missed; bad options or an
// objective that does not parse fail it at once (t.Fatal). It returns the result.
func Assert(tb testing.TB, objective string, t Target, opts ...Option) *Result {
	tb.Helper()
	if _, err := sweep.ParseObjective(objective); err != nil {
		tb.Fatalf("loadtest.Assert: %v", err)
	}
	res, err := Run(tb.Context(), t, opts...)
	if err != nil {
		tb.Fatalf("loadtest.Assert(%s): %v", t, err)
	}
	if err := res.Check(objective); err != nil {
		tb.Errorf("loadtest.Assert(%s): %v", t, err)
	}
	return res
}
