package report

import (
	"fmt"
	"html/template"
	"io"
	"iter"
	"sync"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/result"
)

// endpointRow is one endpoint of a scenario mix, formatted for the text and HTML reports.
type endpointRow struct {
	Name, QPS, Share, P50, P90, P99, Max, Status string
	Errors                                       int64
}

// endpointRows formats the endpoints of step s, and for a mix with weights the line that
// gives QPS and TPS (whole iterations of the mix per second = QPS / iteration size).
func endpointRows(r *result.Run, s *measure.Step) (rows []endpointRow, rates string) {
	secs := s.Elapsed.Duration().Seconds()
	for _, ep := range s.Endpoints {
		qps, share := 0.0, 0.0
		if secs > 0 {
			qps = float64(ep.Requests-ep.Drained) / secs // inside the window, as the step's QPS
		}
		if s.Requests > 0 {
			share = 100 * float64(ep.Requests) / float64(s.Requests)
		}
		lat := ep.Latency
		if lat == nil {
			lat = measure.NewHistogram()
		}
		rows = append(rows, endpointRow{
			Name: ep.Name, QPS: fmt.Sprintf("%.2f", qps), Share: fmt.Sprintf("%.1f%%", share),
			P50: FormatDuration(lat.Percentile(50)), P90: FormatDuration(lat.Percentile(90)),
			P99: FormatDuration(lat.Percentile(99)), Max: FormatDuration(lat.Max()),
			Errors: ep.Errors.Total(), Status: statusLine(ep.Status),
		})
	}
	if r != nil && r.Scenario.Mix != nil {
		if n := r.Scenario.Mix.IterationSize(); n > 0 {
			rates = fmt.Sprintf("QPS %.2f requests/s; TPS %.2f iterations/s (one iteration of the mix is %d requests)",
				s.QPS(), s.QPS()/float64(n), n)
		}
	}
	return rows, rates
}

// Endpoints writes the per-endpoint table of a scenario mix (nothing for a single request):
// QPS, share, latency percentiles, errors and status codes of each endpoint, and the TPS of
// a mix with weights.
func Endpoints(w io.Writer, r *result.Run, s *measure.Step) error {
	return render(w, "the endpoints table", func(w io.Writer) { endpoints(w, r, s) })
}

func endpoints(w io.Writer, r *result.Run, s *measure.Step) {
	if len(s.Endpoints) == 0 {
		return
	}
	rows, rates := endpointRows(r, s)
	fmt.Fprintln(w, "Endpoints:")
	fmt.Fprintf(w, "  %-24s %10s %7s %9s %9s %9s %9s %7s  %s\n", "name", "req/s", "share", "p50", "p90", "p99", "max", "errors", "status codes")
	for _, e := range rows {
		fmt.Fprintf(w, "  %-24s %10s %7s %9s %9s %9s %9s %7d  %s\n", e.Name, e.QPS, e.Share, e.P50, e.P90, e.P99, e.Max, e.Errors, e.Status)
	}
	if rates != "" {
		fmt.Fprintf(w, "  %s\n", rates)
	}
}

var endpointsTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("endpoints").Parse(`{{if .Rates}}<p>{{.Rates}}</p>
{{end}}<table class="endpoints"><thead><tr><th>endpoint</th><th>req/s</th><th>share</th><th>p50</th><th>p90</th><th>p99</th><th>max</th><th>errors</th><th>status codes</th></tr></thead><tbody>
{{range .Rows}}<tr><td>{{.Name}}</td><td>{{.QPS}}</td><td>{{.Share}}</td><td>{{.P50}}</td><td>{{.P90}}</td><td>{{.P99}}</td><td>{{.Max}}</td><td>{{.Errors}}</td><td>{{.Status}}</td></tr>
{{end}}</tbody></table>`))
})

// endpointSections yields a table per step of a scenario mix (none for a single request).
func endpointSections(r *result.Run) iter.Seq[Section] {
	return func(yield func(Section) bool) {
		for _, s := range r.Steps {
			if len(s.Endpoints) == 0 {
				continue
			}
			rows, rates := endpointRows(r, s)
			if !yield(section(stepTitle("Endpoints", r, s), endpointsTmpl(), struct {
				Rows  []endpointRow
				Rates string
			}{rows, rates})) {
				return
			}
		}
	}
}
