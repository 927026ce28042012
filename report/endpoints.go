package report

import (
	"fmt"
	"io"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/result"
)

// Endpoints writes the per-endpoint table of a scenario mix (nothing for a single request):
// QPS, share, latency percentiles, errors and status codes of each endpoint, and for a mix
// with weights the TPS: whole iterations of the mix per second (QPS / iteration size).
func Endpoints(w io.Writer, r *result.Run, s *measure.Step) {
	if len(s.Endpoints) == 0 {
		return
	}
	secs := s.Elapsed.Duration().Seconds()
	fmt.Fprintln(w, "Endpoints:")
	fmt.Fprintf(w, "  %-24s %10s %7s %9s %9s %9s %9s %7s  %s\n", "name", "req/s", "share", "p50", "p90", "p99", "max", "errors", "status codes")
	for _, ep := range s.Endpoints {
		qps, share := 0.0, 0.0
		if secs > 0 {
			qps = float64(ep.Requests) / secs
		}
		if s.Requests > 0 {
			share = 100 * float64(ep.Requests) / float64(s.Requests)
		}
		lat := ep.Latency
		if lat == nil {
			lat = measure.NewHistogram()
		}
		fmt.Fprintf(w, "  %-24s %10.2f %6.1f%% %9s %9s %9s %9s %7d  %s\n", ep.Name, qps, share,
			FormatDuration(lat.Percentile(50)), FormatDuration(lat.Percentile(90)),
			FormatDuration(lat.Percentile(99)), FormatDuration(lat.Max()), ep.Errors.Total(), statusLine(ep.Status))
	}
	if r != nil && r.Scenario.Mix != nil {
		if n := r.Scenario.Mix.IterationSize(); n > 0 {
			fmt.Fprintf(w, "  QPS %.2f requests/s; TPS %.2f iterations/s (one iteration of the mix is %d requests)\n",
				s.QPS(), s.QPS()/float64(n), n)
		}
	}
}
