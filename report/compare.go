package report

import (
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"os"
	"slices"
	"text/tabwriter"

	"github.com/apiperf/apiperf/compare"
	"github.com/apiperf/apiperf/report/chart"
	"github.com/apiperf/apiperf/sweep"
)

// CompareHTMLFile is the page `apiperf compare` writes.
const CompareHTMLFile = "compare.html"

// maxCommonColumns caps the p99 columns of the comparison table (the lowest common levels).
const maxCommonColumns = 4

// compareHeader and compareCells are the comparison table, one row per variant.
func compareHeader(m *compare.Multi) []string {
	h := []string{"run", "peak QPS", "at", "% of " + first(m), "% of native", "knee"}
	for _, v := range commonShown(m) {
		h = append(h, "p99 @"+sweep.FormatValue(v))
	}
	return append(h, "errors", "target CPU", "CPU/req", "target RSS", "req/conn")
}

func first(m *compare.Multi) string {
	if len(m.Variants) == 0 {
		return "first"
	}
	return m.Variants[0].Name
}

func commonShown(m *compare.Multi) []float64 { return m.Common[:min(len(m.Common), maxCommonColumns)] }

func compareCells(m *compare.Multi, i int) []string {
	v := m.Variants[i]
	peak, at := "-", "-"
	if p := v.Peak(); p != nil {
		peak, at = fmt.Sprintf("%.0f", p.QPS), p.Label
	}
	knee := "-"
	if v.Knee > 0 {
		knee = sweep.Label(v.Rate, v.Knee)
	}
	row := []string{v.Name, peak, at, pctText(m.PctOfFirst(i)), pctText(m.PctOfNative(i)), knee}
	for _, c := range commonShown(m) {
		p99 := math.NaN()
		if l := m.At(i, c); l != nil {
			p99 = l.Millis(l.P99)
		}
		row = append(row, ms(p99))
	}
	cpu, rss, conns := "-", "-", "-"
	if v.TargetCPU > 0 {
		cpu = fmt.Sprintf("%.2f cores", v.TargetCPU)
	}
	if v.TargetRSS > 0 {
		rss = fmt.Sprintf("%.1f MiB", v.TargetRSS/(1<<20))
	}
	if v.RequestsPerConn > 0 {
		conns = fmt.Sprintf("%.0f", v.RequestsPerConn)
		if v.RequestsPerConn < 10 {
			conns = fmt.Sprintf("%.2f", v.RequestsPerConn)
		}
	}
	perReq := "-"
	if d := m.CPUPerRequest(i); d >= 0 {
		perReq = FormatDuration(d)
	}
	return append(row, pctText(m.ErrorPct(i)), cpu, perReq, rss, conns)
}

func pctText(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", v)
}

// CompareText writes the N-way comparison as a table, one row per run, then its warnings
// and headline.
func CompareText(w io.Writer, m *compare.Multi) error {
	rows := make([][]string, len(m.Variants))
	for i := range m.Variants {
		rows[i] = compareCells(m, i)
	}
	notes, warnings := withConditions(m.Notes, m.Warnings, m.Conditions) // report/conditions.go
	if err := writeCellTable(w, "comparison", compareHeader(m), rows, notes, warnings, m.Headline()); err != nil {
		return err
	}
	return compareTraceText(w, m) // report/trace.go
}

// writeCellTable writes a right-aligned table (header, then rows), then its notes as they
// are, one line per warning, and the headline: the layout of diff and compare.
func writeCellTable(w io.Writer, what string, header []string, rows [][]string, notes, warnings []string, headline string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, row := range append([][]string{header}, rows...) {
		for _, c := range row {
			fmt.Fprintf(tw, "%s\t", c)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w", what, err)
	}
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
	for _, wn := range warnings {
		fmt.Fprintf(w, "warning: %s\n", wn)
	}
	_, err := fmt.Fprintln(w, headline)
	return err
}

// compareCharts overlays the runs: QPS, p99 (log scale) and success rate against the union
// of their levels, one line per run (a gap where a run did not measure a level).
func compareCharts(m *compare.Multi) []namedChart {
	var vals []float64
	for _, v := range m.Variants {
		for _, l := range v.Levels {
			if !slices.Contains(vals, l.Value) {
				vals = append(vals, l.Value)
			}
		}
	}
	slices.Sort(vals)
	x := make([]string, len(vals))
	for i, v := range vals {
		x[i] = sweep.FormatValue(v)
	}
	series := func(f func(l *sweep.Level) float64) []chart.Series {
		var out []chart.Series
		for i, v := range m.Variants {
			y := make([]float64, len(vals))
			for k, val := range vals {
				y[k] = math.NaN()
				if l := m.At(i, val); l != nil {
					y[k] = f(l)
				}
			}
			out = append(out, chart.Series{Name: v.Name, Y: y, Dashed: i > 0 && i%2 == 0})
		}
		return out
	}
	p99 := func(l *sweep.Level) float64 {
		if v := l.Millis(l.P99); v > 0 {
			return v
		}
		return math.NaN()
	}
	xl := xLabel(m.Rate)
	return []namedChart{
		{"qps", "QPS per level", chart.Chart{Title: "QPS / " + names(m), XLabel: xl, YLabel: "Requests/sec", X: x,
			Series: series(func(l *sweep.Level) float64 { return l.QPS })}},
		{"p99", "p99 latency per level", chart.Chart{Title: "p99 latency / " + names(m), XLabel: xl, YLabel: "p99 (ms, log scale)", X: x, LogY: true,
			Series: series(p99)}},
		{"successrate", "Success rate per level", chart.Chart{Title: "Success rate / " + names(m), XLabel: xl, YLabel: "success rate (%)", X: x,
			YRange: &chart.Range{Min: 0, Max: 100}, Series: series(func(l *sweep.Level) float64 { return l.SuccessPct() })}},
	}
}

func names(m *compare.Multi) string {
	out := ""
	for i, v := range m.Variants {
		if i > 0 {
			out += " vs "
		}
		out += v.Name
	}
	return out
}

type htmlCompare struct {
	CSS       template.CSS
	Title     string
	Headline  string
	Runs      []compare.Variant
	Header    []string
	Rows      [][]string
	Charts    []htmlChart
	Notes     []string
	Warnings  []string
	LevelName string
	// TraceHeader and TraceRows are the execution trace summaries side by side (report/trace.go).
	TraceHeader []string
	TraceRows   [][]string
}

// CompareHTML writes the comparison as one self-contained page that works offline: the
// headline, the overlaid charts, the table and the warnings. Names and paths are escaped.
func CompareHTML(w io.Writer, m *compare.Multi) error {
	p := htmlCompare{CSS: css(), Title: names(m), Headline: m.Headline(), Runs: m.Variants,
		Header: compareHeader(m), Notes: m.Notes, Warnings: m.Warnings, LevelName: xLabel(m.Rate)}
	p.Notes, p.Warnings = withConditions(m.Notes, m.Warnings, m.Conditions)
	for _, c := range compareCharts(m) {
		if c.chart.Validate() != nil {
			continue
		}
		hc, err := embedChart(c.suffix, c.title, c.chart)
		if err != nil {
			return err
		}
		p.Charts = append(p.Charts, hc)
	}
	for i := range m.Variants {
		p.Rows = append(p.Rows, compareCells(m, i))
	}
	p.TraceHeader, p.TraceRows = compareTraceCells(m)
	if err := templates().ExecuteTemplate(w, "compare", p); err != nil {
		return fmt.Errorf("writing comparison: %w", err)
	}
	return nil
}

// WriteCompare writes compare.html and the overlaid charts compare.<qps|p99|successrate>
// as .png and .svg into dir (created if needed); it returns the paths.
func WriteCompare(dir string, m *compare.Multi) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("writing comparison: %w", err)
	}
	var charts []namedChart
	for _, c := range compareCharts(m) {
		if c.chart.Validate() == nil {
			charts = append(charts, c)
		}
	}
	out := outputs{dir: dir}
	err := errors.Join(
		out.charts("compare.", charts),
		out.render(CompareHTMLFile, func(w io.Writer) error { return CompareHTML(w, m) }),
	)
	return out.paths, err
}
