package report

import (
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"os"

	"github.com/apiperf/apiperf/compare"
	"github.com/apiperf/apiperf/report/chart"
	"github.com/apiperf/apiperf/sweep"
)

// DiffHTMLFile is the name of the HTML page of a diff, "<a>_<b>.diff.html" like its charts,
// so that diffs of other pairs written into one directory do not replace each other.
func DiffHTMLFile(d *compare.Diff) string { return DiffBase(d) + ".diff.html" }

// DiffBase is the file name stem of a diff's charts: "<a>_<b>", each name made safe.
func DiffBase(d *compare.Diff) string {
	return SafeName(d.A.Name) + "_" + SafeName(d.B.Name)
}

// diffCharts builds the two overlay charts of a diff, named by their file suffix.
func diffCharts(d *compare.Diff) ([]namedChart, error) {
	a, b := d.A, d.B
	title := fmt.Sprintf("%s vs %s", a.Name, b.Name)
	qps, err := chart.Overlay(QPSChart(sideOf(a), ""), QPSChart(sideOf(b), ""), a.Name, b.Name)
	if err != nil {
		return nil, fmt.Errorf("drawing the QPS diff chart: %w", err)
	}
	qps.Title = "QPS & TTLB / " + title
	succ, err := chart.Overlay(successOf(d, a), successOf(d, b), a.Name, b.Name)
	if err != nil {
		return nil, fmt.Errorf("drawing the success diff chart: %w", err)
	}
	succ.Title = "Success Rate / " + title
	return []namedChart{
		{"qps.ttlb.diff", "QPS and mean latency (TTLB)", qps},
		{"successrate.diff", "Success rate", succ},
	}, nil
}

// successOf is a side's success chart with the one figure the diff compares.
func successOf(d *compare.Diff, s compare.Side) chart.Chart {
	c := SuccessChart(sideOf(s), "", false)
	c.Series = []chart.Series{{Name: "success", Y: column(s.Levels, func(l sweep.Level) float64 { return d.Success(&l) })}}
	if d.Classic {
		c.Series[0].Name = "success (classic)"
	}
	return c
}

// WriteDiff writes the comparison charts <a>_<b>.qps.ttlb.diff and <a>_<b>.successrate.diff
// as .png and .svg, and <a>_<b>.diff.html, into dir (created if needed); it returns the paths.
func WriteDiff(dir string, d *compare.Diff) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("writing diff: %w", err)
	}
	charts, err := diffCharts(d)
	if err != nil {
		return nil, err
	}
	out := outputs{dir: dir}
	err = errors.Join(
		out.charts(DiffBase(d)+".", charts),
		out.render(DiffHTMLFile(d), func(w io.Writer) error { return DiffHTML(w, d) }),
	)
	return out.paths, err
}

// diffCells is one table row of a diff as text: level, QPS A, QPS B, ratio, mean A, mean B,
// p99 A, p99 B, ratio, success A, success B.
func diffCells(d *compare.Diff, r compare.Row) []string {
	get := func(l *sweep.Level, f func(*sweep.Level) float64) float64 {
		if l == nil {
			return math.NaN()
		}
		return f(l)
	}
	qps := func(l *sweep.Level) float64 { return l.QPS }
	mean := func(l *sweep.Level) float64 { return l.MeanMillis() }
	p99 := func(l *sweep.Level) float64 { return l.Millis(l.P99) }
	num := func(v float64) string {
		if math.IsNaN(v) {
			return "-"
		}
		return fmt.Sprintf("%.2f", v)
	}
	ratio := func(v float64) string {
		if math.IsNaN(v) {
			return "-"
		}
		return fmt.Sprintf("%.2f%%", 100*v)
	}
	return []string{
		r.Label, num(get(r.A, qps)), num(get(r.B, qps)), ratio(r.QPSRatio()),
		ms(get(r.A, mean)), ms(get(r.B, mean)), ms(get(r.A, p99)), ms(get(r.B, p99)), ratio(r.P99Ratio()),
		pct(d.Success(r.A)), pct(d.Success(r.B)),
	}
}

// DiffText writes the diff as a table per level (QPS A, QPS B, ratio; mean and p99 A, B,
// ratio; success A, B), then its warnings and the headline ratio of peak QPS.
func DiffText(w io.Writer, d *compare.Diff) error {
	fmt.Fprintf(w, "A: %s\nB: %s\n", describe(d.A), describe(d.B))
	succ := "success"
	if d.Classic {
		succ = "classic success"
	}
	header := []string{xLabel(d.A.Rate), "QPS A", "QPS B", "A/B", "mean A", "mean B", "p99 A", "p99 B", "A/B", succ + " A", succ + " B"}
	rows := make([][]string, len(d.Rows))
	for i, r := range d.Rows {
		rows[i] = diffCells(d, r)
	}
	notes, warnings := withConditions(nil, d.Warnings, d.Conditions) // report/conditions.go
	return writeCellTable(w, "diff", header, rows, notes, warnings, d.Headline())
}

func describe(s compare.Side) string {
	out := s.Name
	if s.Source != "" {
		out += " (" + s.Source + ")"
	}
	if s.Classic {
		out += ", classic .dat"
	}
	return out
}

type htmlDiff struct {
	CSS                    template.CSS
	A, B, SourceA, SourceB string
	Headline, LevelName    string
	Charts                 []htmlChart
	Rows                   [][]string
	Classic                bool
	Notes, Warnings        []string
}

// DiffHTML writes the diff as one self-contained page that works offline: headline, the two
// charts, the level table and the warnings. Names and paths are escaped.
func DiffHTML(w io.Writer, d *compare.Diff) error {
	charts, err := diffCharts(d)
	if err != nil {
		return err
	}
	p := htmlDiff{
		CSS: css(), A: d.A.Name, B: d.B.Name, SourceA: d.A.Source, SourceB: d.B.Source,
		Headline: d.Headline(), LevelName: xLabel(d.A.Rate), Classic: d.Classic, Notes: d.Notes, Warnings: d.Warnings,
	}
	_, p.Warnings = withConditions(nil, d.Warnings, d.Conditions)
	for _, c := range charts {
		hc, err := embedChart(c.suffix, c.title, c.chart)
		if err != nil {
			return err
		}
		p.Charts = append(p.Charts, hc)
	}
	for _, r := range d.Rows {
		p.Rows = append(p.Rows, diffCells(d, r))
	}
	if err := templates().ExecuteTemplate(w, "diff", p); err != nil {
		return fmt.Errorf("writing diff: %w", err)
	}
	return nil
}
