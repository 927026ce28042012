package report

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/apiperf/apiperf/compare"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/outfile"
	"github.com/apiperf/apiperf/report/chart"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/sweep"
)

// HTMLFile is the name of the HTML report in a run directory.
const HTMLFile = "report.html"

// BenchFile is the run in Go benchmark format, for benchstat.
const BenchFile = "bench.txt"

// WorkersFile is a scaled-out run's workers table (Workers), as run and sweep print it.
const WorkersFile = "workers.txt"

// WriteAll renders every output of run r into dir (created if needed) and returns the paths
// written: <name>.dat, the charts <name>_qps_ttlb, <name>_successrate and <name>_latency as
// .png and .svg, bench.txt, report.html and, scaled out, workers.txt. Everything comes from r alone, so a saved
// run.json re-renders the same files. The name is r.Name, or DefaultName(r) when empty.
func WriteAll(dir string, r *result.Run) ([]string, error) {
	if len(r.Steps) == 0 {
		return nil, errors.New("rendering run: it has no steps")
	}
	r.Redact()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("rendering run: %w", err)
	}
	name := SafeName(r.Name)
	if r.Name == "" {
		name = DefaultName(r)
	}
	rec := r.Levels()
	out := outputs{dir: dir}
	err := errors.Join(
		out.render(name+".dat", func(w io.Writer) error { return WriteDat(w, rec.Levels) }),
		out.charts(name+"_", runCharts(r, rec)),
		out.render(BenchFile, func(w io.Writer) error { return WriteBench(w, r) }),
		out.render(HTMLFile, func(w io.Writer) error { return writeHTML(w, r, rec) }),
	)
	if r.Cluster != nil {
		err = errors.Join(err, out.render(WorkersFile, func(w io.Writer) error { return Workers(w, r.Cluster) }))
	}
	return out.paths, err
}

// outputs writes the files of one rendering into dir and keeps their paths.
type outputs struct {
	dir   string
	paths []string
}

// render writes what fill produces to dir/name as it is produced (nothing on a rendering
// error: the file keeps its old content). A report is larger than its run.json: it is never
// held whole in memory.
func (o *outputs) render(name string, fill func(w io.Writer) error) error {
	p := filepath.Join(o.dir, name)
	var rerr error
	err := outfile.WriteWith(p, func(f io.Writer) error {
		fw := &errWriter{w: f}
		bw := bufio.NewWriterSize(fw, 64<<10)
		if rerr = fill(bw); rerr != nil && fw.err == nil {
			return rerr
		}
		if ferr := bw.Flush(); ferr != nil {
			rerr = nil // the file failed, not the rendering
			return ferr
		}
		return nil
	})
	if rerr != nil {
		return fmt.Errorf("rendering %s: %w", name, rerr)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	o.paths = append(o.paths, p)
	return nil
}

// charts writes each chart as dir/<prefix><suffix>.png and .svg.
func (o *outputs) charts(prefix string, charts []namedChart) error {
	for _, c := range charts {
		base := filepath.Join(o.dir, prefix+c.suffix)
		if err := c.chart.WriteFiles(base); err != nil {
			return fmt.Errorf("writing chart %s: %w", c.suffix, err)
		}
		o.paths = append(o.paths, base+".png", base+".svg")
	}
	return nil
}

// namedChart is a chart and the suffix of its file name.
type namedChart struct {
	suffix, title string
	chart         chart.Chart
}

// runCharts builds the three charts of a run from its levels, the peak and knee marked.
func runCharts(r *result.Run, rec *sweep.Record) []namedChart {
	t := Title(r)
	side := side{Rate: r.Load.OpenLoop(), Levels: rec.Levels}
	charts := []namedChart{
		{"qps_ttlb", "QPS and mean latency (TTLB)", QPSChart(side, "QPS & TTLB / "+t)},
		{"successrate", "Success rate", SuccessChart(side, "Success Rate / "+t, true)},
		{"latency", "Latency percentiles", LatencyChart(side, "Latency percentiles / "+t)},
	}
	for i := range charts {
		charts[i].chart.Marks = levelMarks(rec)
	}
	return charts
}

// Title says how the run was made, as the classic charts do: "Running: 10s / Threads: 2 /
// http://host/path" (or the request count when the run had no duration).
func Title(r *result.Run) string {
	what := "Running: " + FormatTestDuration(r.Load.Duration.Duration())
	if r.Load.Duration == 0 && r.Load.Requests > 0 {
		what = fmt.Sprintf("Requests: %d", r.Load.Requests)
	}
	return fmt.Sprintf("%s / Threads: %d / %s", what, r.Load.Threads, r.Scenario.URL)
}

// side is what a chart draws: levels of one run, of concurrency or of rates; Classic says
// they are partial levels of a .dat file (only the classic success rate).
type side struct {
	Rate, Classic bool
	Levels        []sweep.Level
}

func sideOf(s compare.Side) side { return side{Rate: s.Rate, Classic: s.Classic, Levels: s.Levels} }

// xLabel names the x axis of a side's charts.
func xLabel(rate bool) string {
	if rate {
		return "rate (requests/s)"
	}
	return "concurrency"
}

// labelsOf lists the level values, the categories of the x axis: evenly spaced, so 200 and
// 50000 are both readable.
func labelsOf(levels []sweep.Level) []string {
	out := make([]string, len(levels))
	for i, l := range levels {
		out[i] = sweep.FormatValue(l.Value)
	}
	return out
}

func column(levels []sweep.Level, f func(l sweep.Level) float64) []float64 {
	out := make([]float64, len(levels))
	for i, l := range levels {
		out[i] = f(l)
	}
	return out
}

// QPSChart draws QPS (left axis) and mean latency in ms (right axis) against the levels.
func QPSChart(s side, title string) chart.Chart {
	return chart.Chart{
		Title: title, XLabel: xLabel(s.Rate), YLabel: "Requests/sec", YRightLabel: "mean latency (ms)",
		X: labelsOf(s.Levels),
		Series: []chart.Series{
			{Name: "QPS", Y: column(s.Levels, func(l sweep.Level) float64 { return l.QPS })},
			{Name: "mean latency (ms)", Right: true, Y: column(s.Levels, sweep.Level.MeanMillis)},
		},
	}
}

// SuccessChart draws the success rate against the levels: apiperf's, plus the classic
// figure (socket errors only) when withClassic is set and it differs somewhere. A classic
// side has only the classic figure. The axis zooms to the data; 100% is a reference line.
func SuccessChart(s side, title string, withClassic bool) chart.Chart {
	c := chart.Chart{
		Title: title, XLabel: xLabel(s.Rate), YLabel: "success rate (%)", X: labelsOf(s.Levels),
		RefLines: []chart.RefLine{{Y: 100, Label: "100%"}},
	}
	classic := column(s.Levels, func(l sweep.Level) float64 { return l.Classic })
	if s.Classic {
		c.Series = []chart.Series{{Name: "success (classic)", Y: classic}}
		c.YRange = successRange(classic)
		return c
	}
	ours := column(s.Levels, sweep.Level.SuccessPct)
	c.Series = []chart.Series{{Name: "success", Y: ours}}
	c.YRange = successRange(ours)
	if withClassic && !sameFloats(ours, classic) {
		c.Series = append(c.Series, chart.Series{Name: "classic: socket errors only", Y: classic, Dashed: true})
		c.YRange = successRange(ours, classic)
	}
	return c
}

// LatencyChart draws p50, p90, p99 and p99.9 latency in ms on a log axis against the levels.
func LatencyChart(s side, title string) chart.Chart {
	pos := func(field func(l sweep.Level) measure.Duration) func(l sweep.Level) float64 {
		return func(l sweep.Level) float64 {
			if v := l.Millis(field(l)); v > 0 {
				return v
			}
			return math.NaN()
		}
	}
	return chart.Chart{
		Title: title, XLabel: xLabel(s.Rate), YLabel: "latency (ms, log scale)", X: labelsOf(s.Levels), LogY: true,
		Series: []chart.Series{
			{Name: "p50", Y: column(s.Levels, pos(func(l sweep.Level) measure.Duration { return l.P50 }))},
			{Name: "p90", Y: column(s.Levels, pos(func(l sweep.Level) measure.Duration { return l.P90 }))},
			{Name: "p99", Y: column(s.Levels, pos(func(l sweep.Level) measure.Duration { return l.P99 }))},
			{Name: "p99.9", Y: column(s.Levels, pos(func(l sweep.Level) measure.Duration { return l.P999 }))},
		},
	}
}

func sameFloats(a, b []float64) bool {
	for i := range a {
		if a[i] != b[i] && !(math.IsNaN(a[i]) && math.IsNaN(b[i])) {
			return false
		}
	}
	return true
}

// DefaultName makes a run's name from its target's host and port ("127.0.0.1-8080", as sweep
// names its directories), or
// "apiperf" when the URL has none.
func DefaultName(r *result.Run) string {
	u, err := url.Parse(r.Scenario.URL)
	if err != nil || u.Hostname() == "" {
		return "apiperf"
	}
	n := u.Hostname()
	if p := u.Port(); p != "" {
		n += "-" + p
	}
	return SafeName(n)
}

// SafeName makes s usable as a file name on every system: letters, digits, '.', '-' and
// '_' are kept, anything else becomes '_'; leading dots and underscores are dropped so the file is not
// hidden; empty gives "apiperf".
func SafeName(s string) string {
	var b strings.Builder
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
			b.WriteRune(c)
		default:
			b.WriteByte('_')
		}
	}
	n := strings.TrimLeft(b.String(), "._")
	if len(n) > 100 {
		n = n[:100]
	}
	if n == "" {
		return "apiperf"
	}
	return n
}
