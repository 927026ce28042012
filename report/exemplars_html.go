package report

import (
	"fmt"
	"html/template"
	"iter"
	"strings"
	"sync"
	"time"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/report/chart"
	"github.com/apiperf/apiperf/result"
)

// exemplarRow is one kept request, formatted for the HTML report.
type exemplarRow struct {
	Band, Latency, Uncorrected, Start, Endpoint, Trace, Timing string
	Status, Conn                                               int
}

func exemplarRowOf(band string, e measure.Exemplar) exemplarRow {
	r := exemplarRow{Band: band, Latency: FormatDuration(e.Latency.Duration()), Start: FormatDuration(e.Start.Duration()),
		Endpoint: e.Endpoint, Trace: e.Trace.String(), Timing: timingText(e.Timing), Status: e.Status, Conn: e.Conn}
	if e.Uncorrected > 0 {
		r.Uncorrected = FormatDuration(e.Uncorrected.Duration())
	}
	return r
}

// timingRow is one line of the Server-Timing table: a metric (or the client's latency, or
// what the metrics leave unaccounted) at each band.
type timingRow struct {
	Name      string
	At        []string
	Responses int64
}

var exemplarsTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("exemplars").Parse(`<table class="exemplars"><thead><tr><th></th><th>latency</th>{{if .Open}}<th>uncorrected</th>{{end}}<th>status</th><th>started at</th><th>connection</th>{{if .Mix}}<th>endpoint</th>{{end}}<th>trace id</th>{{if .Timed}}<th>its Server-Timing</th>{{end}}</tr></thead><tbody>
{{range .Rows}}<tr><td>{{.Band}}</td><td>{{.Latency}}</td>{{if $.Open}}<td>{{.Uncorrected}}</td>{{end}}<td>{{.Status}}</td><td>{{.Start}}</td><td>{{.Conn}}</td>{{if $.Mix}}<td>{{.Endpoint}}</td>{{end}}<td><code>{{.Trace}}</code></td>{{if $.Timed}}<td>{{.Timing}}</td>{{end}}</tr>
{{end}}</tbody></table>
<p class="note">The {{.N}} slowest of {{.Responses}} responses, slowest first, then one request around each latency percentile. "Started at" is from the start of the measured window{{if .Open}}, when the request was due; latency is corrected, uncorrected is from the actual send{{end}}.{{if not .Traced}} Run with --traceparent to send each request's trace id to the target and list it here.{{end}}</p>
{{with .Chart}}<figure class="chart" id="chart-{{.ID}}"><img alt="{{.Title}}" src="{{.Src}}" width="{{.Width}}" height="{{.Height}}"><figcaption>{{.Title}}</figcaption></figure>
{{end}}`))
})

var timingTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("timing").Parse(`<table class="server-timing"><thead><tr><th></th>{{range .Bands}}<th>{{.}}</th>{{end}}<th>responses</th></tr></thead><tbody>
{{range .Rows}}<tr><td>{{.Name}}</td>{{range .At}}<td>{{.}}</td>{{end}}<td>{{.Responses}}</td></tr>
{{end}}</tbody></table>
<p class="note">Each Server-Timing metric's dur at each percentile, beside the client's latency; "not in Server-Timing" is, per response, its latency minus the sum of its metrics (network, queueing, untimed work; metrics that overlap make it too small). Percentiles of different rows come from different requests.{{if .Malformed}} {{.Malformed}} malformed metrics were skipped.{{end}}</p>
{{with .Chart}}<figure class="chart" id="chart-{{.ID}}"><img alt="{{.Title}}" src="{{.Src}}" width="{{.Width}}" height="{{.Height}}"><figcaption>{{.Title}}</figcaption></figure>
{{end}}`))
})

// section renders data with t as a section of the report (an error shows in its place).
func section(title string, t *template.Template, data any) Section {
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		return Section{Title: title, Body: template.HTML(template.HTMLEscapeString(err.Error()))}
	}
	return Section{Title: title, Body: template.HTML(b.String())}
}

// chartOf embeds c, nil when it cannot be drawn.
func chartOf(id, title string, c chart.Chart) *htmlChart {
	hc, err := embedChart(id, title, c)
	if err != nil {
		return nil
	}
	return &hc
}

// stepTitle names a per-step section: "Slowest requests at c=50 (run 2)".
func stepTitle(what string, r *result.Run, s *measure.Step) string {
	if len(r.Steps) > 1 {
		what += " at " + s.Label
		if s.Rep > 0 {
			what += fmt.Sprintf(" (run %d)", s.Rep+1)
		}
	}
	return what
}

// exemplarSections yields, per step that kept requests, the table of its slowest and band
// requests, with a chart of its latency per second that marks them; each is made when asked.
func exemplarSections(r *result.Run) iter.Seq[Section] {
	return func(yield func(Section) bool) {
		for i, s := range r.Steps {
			x := s.Exemplars
			if x == nil || len(x.Slowest) == 0 {
				continue
			}
			d := struct {
				Rows                     []exemplarRow
				Open, Mix, Traced, Timed bool
				N                        int
				Responses                int64
				Chart                    *htmlChart
			}{Open: s.Open != nil, Mix: len(s.Endpoints) > 0, N: len(x.Slowest), Responses: s.Requests}
			for k, e := range x.Slowest {
				d.Rows = append(d.Rows, exemplarRowOf(fmt.Sprintf("slowest %d", k+1), e))
				d.Traced = d.Traced || !e.Trace.IsZero()
				d.Timed = d.Timed || len(e.Timing) > 0
			}
			for _, b := range x.Bands {
				d.Rows = append(d.Rows, exemplarRowOf(BandName(b.Percentile), b.Exemplar))
			}
			if c, ok := slowestChart(s); ok {
				d.Chart = chartOf(fmt.Sprintf("slowest_%d", i), "Latency per second, the slowest requests marked", c)
			}
			if !yield(section(stepTitle("Slowest requests", r, s), exemplarsTmpl(), d)) {
				return
			}
		}
	}
}

// slowestChart draws step s's p50 and p99 per interval and its slowest requests as dots
// where they ended.
func slowestChart(s *measure.Step) (chart.Chart, bool) {
	c := chart.Chart{Title: "Latency per interval and the slowest requests", XLabel: "seconds in the window", YLabel: "latency (ms)"}
	var p50, p99 []float64
	inWindow(s, func(sec measure.Second, end, _ float64) {
		c.XNum = append(c.XNum, end)
		l50, l99 := latencyOf(sec)
		p50, p99 = append(p50, l50), append(p99, l99)
	})
	if len(c.XNum) == 0 {
		return c, false
	}
	c.Series = []chart.Series{{Name: "p50", Y: p50}, {Name: "p99", Y: p99}}
	c.DotsName = "slowest requests"
	for _, e := range s.Exemplars.Slowest {
		end := e.Start.Duration() + e.Latency.Duration()
		c.Dots = append(c.Dots, chart.Dot{X: end.Seconds(), Y: float64(e.Latency.Duration()) / float64(time.Millisecond)})
	}
	return c, c.Validate() == nil
}

// timingSections yields, per step whose responses sent Server-Timing, a table and a chart of
// each metric at each percentile beside the client's latency and what is left.
func timingSections(r *result.Run) iter.Seq[Section] {
	return func(yield func(Section) bool) {
		for i, s := range r.Steps {
			st := s.ServerTiming
			if st == nil || len(st.Metrics) == 0 {
				continue
			}
			ps := measure.Bands[:]
			d := struct {
				Bands     []string
				Rows      []timingRow
				Malformed int64
				Chart     *htmlChart
			}{Malformed: st.Malformed}
			c := chart.Chart{Title: "Where the time goes", XLabel: "percentile", YLabel: "ms"}
			for _, p := range ps {
				d.Bands = append(d.Bands, BandName(p))
				c.X = append(c.X, BandName(p))
			}
			add := func(name string, h *measure.Histogram, n int64, dashed bool) {
				row := timingRow{Name: name, Responses: n}
				var ys []float64
				for _, p := range ps {
					v := h.Percentile(p)
					row.At = append(row.At, FormatDuration(v))
					ys = append(ys, float64(v)/float64(time.Millisecond))
				}
				d.Rows = append(d.Rows, row)
				c.Series = append(c.Series, chart.Series{Name: name, Y: ys, Dashed: dashed})
			}
			add("client latency", s.Latency, s.Requests, false)
			for _, m := range st.Metrics {
				add(m.Name, m.Histogram, m.Responses, false)
			}
			if st.Unaccounted != nil {
				add("not in Server-Timing", st.Unaccounted, st.Responses, true)
			}
			if c.Validate() == nil {
				d.Chart = chartOf(fmt.Sprintf("server_timing_%d", i), "Client latency, each Server-Timing metric and what is left, by percentile", c)
			}
			if !yield(section(stepTitle("Server-Timing", r, s), timingTmpl(), d)) {
				return
			}
		}
	}
}
