package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apiperf/apiperf/conditions"
	"github.com/apiperf/apiperf/outfile"
	"github.com/apiperf/apiperf/report/chart"
	"github.com/apiperf/apiperf/sweep"
)

// Trend is one metric of one target across recorded runs over time, one line per level, so
// that a slow drift shows: a chart of `apiperf history trend`.
type Trend struct {
	Metric string     `json:"metric"`           // "p99", "qps" or "success"
	Target string     `json:"target,omitempty"` // what the runs measured, e.g. "run GET http://127.0.0.1:8080/x"
	Runs   []TrendRun `json:"runs"`             // oldest first
	// Changes are the change points of each level's line (FindChanges).
	Changes []TrendChange `json:"changes,omitempty"`
}

// TrendRun is one run's value of the metric at each of its levels (median of repetitions).
type TrendRun struct {
	ID     int64              `json:"id"`
	Start  time.Time          `json:"start"`
	URL    string             `json:"url"`
	Target string             `json:"target,omitempty"` // the Trend it belongs to
	Commit string             `json:"commit,omitempty"`
	Values map[string]float64 `json:"values"` // by level label, e.g. "c=50"
	// Conditions is what the run was measured on; nil unknown.
	Conditions *conditions.Record `json:"conditions,omitempty"`
}

// TrendSet is one metric across runs, one Trend (one chart) per target: runs of another URL
// or kind are another line of inquiry, not another point on the same line.
type TrendSet struct {
	Metric string  `json:"metric"`
	Trends []Trend `json:"trends"`
}

// NewTrendSet groups runs (oldest first) by their Target, in order of first appearance.
func NewTrendSet(metric string, runs []TrendRun) TrendSet {
	set := TrendSet{Metric: metric}
	at := map[string]int{}
	for _, r := range runs {
		i, ok := at[r.Target]
		if !ok {
			i = len(set.Trends)
			at[r.Target] = i
			set.Trends = append(set.Trends, Trend{Metric: metric, Target: r.Target})
		}
		set.Trends[i].Runs = append(set.Trends[i].Runs, r)
	}
	for i := range set.Trends {
		set.Trends[i].FindChanges()
	}
	return set
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
		if v, _, ok := sweep.ParseLabel(s); ok {
			return v
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
	title := t.Metric + " across runs"
	if t.Target != "" {
		title += ": " + t.Target
	}
	c := chart.Chart{Title: title, XLabel: "run (id, start UTC)", YLabel: ylabel, YRange: yr}
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
	c.Series = append(c.Series, t.changeSeries()...)
	c.Marks = append(c.Marks, t.conditionMarks()...)
	return c
}

var trendPage = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("trend").Parse(`<!DOCTYPE html>
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
<p>{{.Summary}}, median of each run's repetitions per level; one chart per target.
Change points (▲, dashed segment medians): {{.Method}}.</p>
{{range $i, $t := .Trends}}<section class="target">
{{if $t.Target}}<h2>{{$t.Target}}</h2>
{{end}}<figure{{if eq $i 0}} id="chart"{{end}}>{{$t.SVG}}</figure>
<table{{if eq $i 0}} id="runs"{{end}}>
<thead><tr><th>Run</th><th>Start (UTC)</th><th>URL</th><th>Commit</th>{{range $t.Levels}}<th>{{.}}</th>{{end}}<th>Change point</th></tr></thead>
<tbody>
{{range $t.Rows}}<tr><td>#{{.ID}}</td><td class="text">{{.Start}}</td><td class="text">{{.URL}}</td><td class="text">{{.Commit}}</td>{{range .Cells}}<td>{{.}}</td>{{end}}<td class="text">{{.Change}}</td></tr>
{{end}}</tbody>
</table>
</section>
{{end}}</body>
</html>
`))
})

// HTML writes a self-contained page of the one trend (see TrendSet.HTML).
func (t Trend) HTML(w io.Writer) error {
	return TrendSet{Metric: t.Metric, Trends: []Trend{t}}.HTML(w)
}

// HTML writes a self-contained page: per target, the chart as inline SVG and a table of the
// values. Everything that came from a run (URLs, labels) is escaped.
func (s TrendSet) HTML(w io.Writer) error {
	type row struct {
		ID                 int64
		Start, URL, Commit string
		Cells              []string
		Change             string
	}
	type section struct {
		Target string
		SVG    template.HTML
		Levels []string
		Rows   []row
	}
	runs := 0
	var sections []section
	for _, t := range s.Trends {
		var svg bytes.Buffer
		if err := t.Chart().SVG(&svg); err != nil {
			return fmt.Errorf("drawing trend chart: %w", err)
		}
		svgBody := svg.Bytes()
		if i := bytes.Index(svgBody, []byte("<svg")); i > 0 {
			svgBody = svgBody[i:] // drop the XML prolog: not allowed inside HTML
		}
		sec := section{Target: t.Target, SVG: template.HTML(svgBody), Levels: t.levels()} // chart.SVG escapes all text
		for i, r := range t.Runs {
			rw := row{ID: r.ID, Start: r.Start.UTC().Format(time.DateTime), URL: r.URL, Commit: r.Commit, Change: t.changeCell(i)}
			if len(rw.Commit) > 12 {
				rw.Commit = rw.Commit[:12]
			}
			for _, l := range sec.Levels {
				cell := "-"
				if v, ok := r.Values[l]; ok {
					cell = FormatTrendValue(s.Metric, v)
				}
				rw.Cells = append(rw.Cells, cell)
			}
			sec.Rows = append(sec.Rows, rw)
		}
		runs += len(t.Runs)
		sections = append(sections, sec)
	}
	data := struct {
		Metric, Summary, Method string
		Trends                  []section
	}{Metric: s.Metric, Summary: Plural(runs, "run") + " of " + Plural(len(s.Trends), "target"), Method: ChangeMethod, Trends: sections}
	if err := trendPage().Execute(w, data); err != nil {
		return fmt.Errorf("writing trend page: %w", err)
	}
	return nil
}

// FormatTrendValue prints a trend's value with its unit: "1.23 ms", "9838.6 req/s", "99.90%".
func FormatTrendValue(metric string, v float64) string {
	switch metric {
	case "qps":
		return strconv.FormatFloat(v, 'f', 1, 64) + " req/s"
	case "success":
		return strconv.FormatFloat(v, 'f', 2, 64) + "%"
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + " ms"
}

// Plural is "1 run", "2 runs": n and the noun, with an s unless n is 1.
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// WriteFiles writes base.html with every target's chart and table, and each target's chart
// as base.svg and base.png (one target) or base-<target>.svg and .png (several). It returns
// the paths written.
func (s TrendSet) WriteFiles(base string) ([]string, error) {
	var paths []string
	for _, t := range s.Trends {
		b := base
		if len(s.Trends) > 1 {
			b = base + "-" + SafeName(strings.ReplaceAll(t.Target, "://", "-"))
		}
		if err := t.Chart().WriteFiles(b); err != nil {
			return paths, fmt.Errorf("writing trend chart: %w", err)
		}
		paths = append(paths, b+".svg", b+".png")
	}
	var page bytes.Buffer
	if err := s.HTML(&page); err != nil {
		return paths, err
	}
	if err := outfile.Write(base+".html", page.Bytes()); err != nil {
		return paths, fmt.Errorf("writing trend page: %w", err)
	}
	return append([]string{base + ".html"}, paths...), nil
}

// WriteFiles writes base.svg, base.png and base.html.
func (t Trend) WriteFiles(base string) error {
	_, err := TrendSet{Metric: t.Metric, Trends: []Trend{t}}.WriteFiles(base)
	return err
}
