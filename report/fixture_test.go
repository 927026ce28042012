package report

import (
	"time"

	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/scenario"
	"github.com/apiperf/apiperf/sweep"
)

// synthStep builds a step with fixed, synthetic numbers (a fixture for rendering, not a
// measurement): qps responses per second over 10 s, latencies spread around base.
func synthStep(c int, qps float64, base time.Duration, e measure.Errors, notFound int64) *measure.Step {
	elapsed := 10 * time.Second
	requests := int64(qps * elapsed.Seconds())
	s := &measure.Step{
		Label: "c=" + itoa(c), Concurrency: c, Elapsed: measure.Duration(elapsed), Threads: 2,
		Requests: requests, Errors: e, Status: map[int]int64{200: requests - notFound},
		Latency: measure.NewHistogram(), AllAttempts: measure.NewHistogram(),
		Start: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
	}
	if notFound > 0 {
		s.Status[404] = notFound
		s.Errors.Status = notFound
	}
	s.Successes = requests - notFound
	s.Attempts = requests + e.Connect + e.Read + e.Write + e.Timeout + e.Protocol
	s.Latency.RecordN(base, requests*90/100)
	s.Latency.RecordN(base*3, requests*9/100)
	s.Latency.RecordN(base*10, requests-requests*99/100)
	s.AllAttempts.Merge(s.Latency)
	s.Finish()
	return s
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// synthSweep is a three-level sweep (levels stored out of order, to prove sorting) with a
// hostile header and URL to prove escaping.
func synthSweep() *result.Run {
	obj, _ := sweep.ParseObjective(sweep.DefaultObjective)
	r := &result.Run{
		Version: result.Version, Tool: "apiperf test", Kind: result.KindSweep, Name: "demo",
		Command: []string{"apiperf", "sweep", "--levels", "10,50,100", "-H", "X-Test: <script>alert(1)</script>", "http://127.0.0.1:8080/a?q=<b>"},
		Host:    "testhost",
		Scenario: scenario.Scenario{URL: "http://127.0.0.1:8080/a?q=<b>", Headers: []scenario.Header{
			{Name: "X-Test", Value: "<script>alert(1)</script>"},
		}},
		Load:  load.Config{Connections: 10, Threads: 2, Duration: measure.Duration(10 * time.Second), Timeout: measure.Duration(2 * time.Second)},
		Start: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		End:   time.Date(2026, 1, 2, 3, 5, 5, 0, time.UTC),
		Steps: []*measure.Step{
			synthStep(50, 9000, 4*time.Millisecond, measure.Errors{}, 0),
			synthStep(10, 4000, 2*time.Millisecond, measure.Errors{}, 0),
			synthStep(100, 8500, 40*time.Millisecond, measure.Errors{Timeout: 120, Connect: 3}, 500),
		},
		Sweep:    sweep.NewRecord(sweep.Plan{Levels: []int{10, 50, 100}}, obj, sweep.Rules{}),
		Warnings: []string{"target said <script>alert(2)</script>"},
	}
	r.Sweep.Analyze(r.Steps)
	return r
}
