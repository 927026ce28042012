package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"time"

	"github.com/apiperf/apiperf/report/chart"
)

// Trend is one metric across recorded runs over time, one line per level, so that a slow
// drift shows: the data of `apiperf history trend`.
type Trend struct {
	Metric string     `json:"metric"` // "p99", "qps" or "success"
	Runs   []TrendRun `json:"runs"`   // oldest first
}

// TrendRun is one run's value of the metric at each of its levels (median of repetitions).
type TrendRun struct {
	ID     int64              `json:"id"`
	Start  time.Time          `json:"start"`
	URL    string             `json:"url"`
	Commit string             `json:"commit,omitempty"`
	Values map[string]float64 `json:"values"` // by level label, e.g. "c=50"
}

// trendAxis names the y axis of a metric.
func trendAxis(metric string) (label string, r *chart.Range) {
	switch metric {
	case "qps":
		return "Requests/sec", nil
	case "success":
		return "Success rate (%)", &chart.Range{Min: 0, Max: 100}
	}
	return metric + " latency (ms)", nil
}

// levels lists every level of the runs, sorted by number when they have one (c=50 < c=200).
func (t Trend) levels() []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range t.Runs {
		for l := range r.Values {
			if !seen[l] {
				seen[l] = true
				out = append(out, l)
			}
		}
	}
	num := func(s string) float64 {
		for i := range s {
			if f, err := strconv.ParseFloat(s[i:], 64); err == nil {
				return f
			}
		}
		return math.Inf(1)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := num(out[i]), num(out[j])
		if a != b {
			return a < b
		}
		return out[i] < out[j]
	})
	return out
}

// Chart is the trend as a line chart: runs on x (by id and start), one series per level.
func (t Trend) Chart() chart.Chart {
	ylabel, yr := trendAxis(t.Metric)
	c := chart.Chart{Title: t.Metric + " across runs", XLabel: "run (id, start UTC)", YLabel: ylabel, YRange: yr}
	for _, r := range t.Runs {
		c.X = append(c.X, fmt.Sprintf("#%d %s", r.ID, r.Start.UTC().Format("01-02 15:04")))
	}
	for _, l := range t.levels() {
		s := chart.Series{Name: l}
		for _, r := range t.Runs {
			v, ok := r.Values[l]
			if !ok {
				v = math.NaN()
			}
			s.Y = append(s.Y, v)
		}
		c.Series = append(c.Series, s)
	}
	return c
}

var trendPage = template.Must(template.New("trend").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>apiperf trend: {{.Metric}}</title>
<style>
body { font-family: sans-serif; margin: 2em; color: #222; }
figure { margin: 0; max-width: 100%; }
figure svg { max-width: 100%; height: auto; }
table { border-collapse: collapse; margin-top: 1.5em; }
th, td { border-bottom: 1px solid #ddd; padding: 0.3em 0.8em; text-align: right; }
th:first-child, td:first-child, td.text { text-align: left; }
</style>
</head>
<body>
<h1>apiperf trend: {{.Metric}}</h1>
<p>{{len .Runs}} runs, median of each run's repetitions per level.</p>
<figure id="chart">{{.SVG}}</figure>
<table id="runs">
<thead><tr><th>Run</th><th>Start (UTC)</th><th>URL</th><th>Commit</th>{{range .Levels}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr><td>#{{.ID}}</td><td class="text">{{.Start}}</td><td class="text">{{.URL}}</td><td class="text">{{.Commit}}</td>{{range .Cells}}<td>{{.}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
</body>
</html>
`))

// HTML writes a self-contained page: the chart as inline SVG and a table of the values.
// Everything that came from a run (URLs, labels) is escaped.
func (t Trend) HTML(w io.Writer) error {
	var svg bytes.Buffer
	if err := t.Chart().SVG(&svg); err != nil {
		return fmt.Errorf("drawing trend chart: %w", err)
	}
	svgBody := svg.Bytes()
	if i := bytes.Index(svgBody, []byte("<svg")); i > 0 {
		svgBody = svgBody[i:] // drop the XML prolog: not allowed inside HTML
	}
	type row struct {
		ID                 int64
		Start, URL, Commit string
		Cells              []string
	}
	levels := t.levels()
	data := struct {
		Metric string
		Runs   []TrendRun
		SVG    template.HTML
		Levels []string
		Rows   []row
	}{Metric: t.Metric, Runs: t.Runs, SVG: template.HTML(svgBody), Levels: levels} // chart.SVG escapes all text
	for _, r := range t.Runs {
		rw := row{ID: r.ID, Start: r.Start.UTC().Format(time.DateTime), URL: r.URL, Commit: r.Commit}
		if len(rw.Commit) > 12 {
			rw.Commit = rw.Commit[:12]
		}
		for _, l := range levels {
			cell := "-"
			if v, ok := r.Values[l]; ok {
				cell = strconv.FormatFloat(v, 'f', 2, 64)
			}
			rw.Cells = append(rw.Cells, cell)
		}
		data.Rows = append(data.Rows, rw)
	}
	if err := trendPage.Execute(w, data); err != nil {
		return fmt.Errorf("writing trend page: %w", err)
	}
	return nil
}

// WriteFiles writes base.svg, base.png and base.html.
func (t Trend) WriteFiles(base string) error {
	if err := t.Chart().WriteFiles(base); err != nil {
		return fmt.Errorf("writing trend chart: %w", err)
	}
	var page bytes.Buffer
	if err := t.HTML(&page); err != nil {
		return err
	}
	if err := os.WriteFile(base+".html", page.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing trend page: %w", err)
	}
	return nil
}
