package report

import (
	"bytes"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/profcap"
	"github.com/apiperf/apiperf/report/chart"
	"github.com/apiperf/apiperf/result"
)

// TargetTopRows is how many functions the report's profile tables list.
const TargetTopRows = 15

// targetTmpl renders one profiled step; html/template escapes every function name.
var targetTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("target").Parse(`<div class="target-profile" id="profile-{{.ID}}">
{{with .Note}}<p>{{.}}</p>{{end}}
{{if .Cum}}<h3>CPU: top {{len .Cum}} by cumulative time (top -cum)</h3>
<table class="top" id="top-cum-{{.ID}}"><thead><tr><th>flat</th><th>flat%</th><th>cum</th><th>cum%</th><th class="l">function</th></tr></thead><tbody>
{{range .Cum}}<tr><td>{{.Flat}}</td><td>{{.FlatPct}}</td><td>{{.Cum}}</td><td>{{.CumPct}}</td><td class="l fn">{{.Function}}</td></tr>
{{end}}</tbody></table>
<h3>CPU: top {{len .Flat}} by own time (top)</h3>
<table class="top" id="top-flat-{{.ID}}"><thead><tr><th>flat</th><th>flat%</th><th>cum</th><th>cum%</th><th class="l">function</th></tr></thead><tbody>
{{range .Flat}}<tr><td>{{.Flat}}</td><td>{{.FlatPct}}</td><td>{{.Cum}}</td><td>{{.CumPct}}</td><td class="l fn">{{.Function}}</td></tr>
{{end}}</tbody></table>{{end}}
{{if .Alloc}}<h3>Allocation sites (alloc_space, since the target started)</h3>
<table class="top" id="alloc-{{.ID}}"><thead><tr><th>flat</th><th>flat%</th><th>cum</th><th>cum%</th><th class="l">function</th></tr></thead><tbody>
{{range .Alloc}}<tr><td>{{.Flat}}</td><td>{{.FlatPct}}</td><td>{{.Cum}}</td><td>{{.CumPct}}</td><td class="l fn">{{.Function}}</td></tr>
{{end}}</tbody></table>{{end}}
{{if .Flame}}<h3>CPU flame graph (icicle: callers above callees; hover for names)</h3>
<div class="flame" id="flame-{{.ID}}" style="overflow-x:auto">{{.Flame}}</div>{{end}}
{{if .Files}}<p class="note">Profiles, beside this report: {{range .Files}}<code>{{.}}</code> {{end}}(open with <code>go tool pprof</code> from this directory)</p>{{end}}
</div>`))
})

type topRow struct{ Flat, FlatPct, Cum, CumPct, Function string }

type targetView struct {
	ID               string
	Note             string
	Cum, Flat, Alloc []topRow
	Flame            template.HTML
	Files            []string
}

// targetSections renders what was captured from the target (r.Target): per profiled step
// the top tables, GC and allocation shares, allocation sites and flame graph; then the
// target's metrics charted over time and per level with a table. Nil without a capture.
func targetSections(r *result.Run) []Section {
	tc := r.Target
	if tc == nil {
		return nil
	}
	var out []Section
	for i, ts := range tc.Profiled() {
		body, err := profileSection(ts, i)
		if err != nil {
			body = template.HTML(template.HTMLEscapeString(err.Error()))
		}
		out = append(out, Section{Title: "Target profile at " + ts.Label, Body: body})
	}
	out = append(out, traceSections(r)...) // report/trace.go
	if body := metricsSection(r); body != "" {
		out = append(out, Section{Title: "Target metrics", Body: body})
	}
	return out
}

func profileSection(ts *profcap.StepRecord, i int) (template.HTML, error) {
	a := ts.Profiles
	v := targetView{ID: fmt.Sprint(i), Files: slices.DeleteFunc(slices.Clone(ts.Files), isTraceFile)} // the trace has its own section
	var notes []string
	if a.CPU != nil {
		notes = append(notes, fmt.Sprintf("CPU profile of %ds starting %v into the level, %s of samples.",
			ts.CPUSeconds, ts.CPUFrom.Round(time.Millisecond), profcap.FormatValue(a.CPU.Total, a.CPU.Unit)))
		v.Cum, v.Flat = topRows(*a.CPU, a.CPU.ByCum), topRows(*a.CPU, a.CPU.ByFlat)
	}
	if a.Shares != nil {
		notes = append(notes, fmt.Sprintf("Garbage collection: %.1f%% of CPU; allocation: %.1f%%.", a.Shares.GCPct, a.Shares.AllocPct))
	}
	if a.Goroutines != nil {
		notes = append(notes, fmt.Sprintf("Goroutines near the end of the level: %d.", *a.Goroutines))
	}
	v.Note = strings.Join(notes, " ")
	if a.AllocSpace != nil {
		v.Alloc = topRows(*a.AllocSpace, a.AllocSpace.ByFlat)
	}
	if a.Flame != nil && a.Flame.Root != nil {
		var b bytes.Buffer
		if err := a.Flame.WriteSVG(&b, "CPU at "+ts.Label); err != nil {
			return "", err
		}
		svg := b.String()
		if _, rest, ok := strings.Cut(svg, "?>\n"); ok && strings.HasPrefix(svg, "<?xml") {
			svg = rest // inline SVG in HTML has no XML declaration
		}
		v.Flame = template.HTML(svg) // profcap.WriteSVG escapes every name it writes
	}
	var b bytes.Buffer
	if err := targetTmpl().Execute(&b, v); err != nil {
		return "", fmt.Errorf("rendering profile of %s: %w", ts.Label, err)
	}
	return template.HTML(b.String()), nil
}

func topRows(t profcap.TopTable, entries []profcap.TopEntry) []topRow {
	rows := make([]topRow, 0, min(TargetTopRows, len(entries)))
	for _, e := range entries[:min(TargetTopRows, len(entries))] {
		rows = append(rows, topRow{
			Flat: profcap.FormatValue(e.Flat, t.Unit), FlatPct: fmt.Sprintf("%.2f%%", e.FlatPct),
			Cum: profcap.FormatValue(e.Cum, t.Unit), CumPct: fmt.Sprintf("%.2f%%", e.CumPct), Function: e.Function,
		})
	}
	return rows
}

// metricsTmpl is the per-level metrics table and the charts.
var metricsTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("metrics").Parse(`{{range .Charts}}<figure class="chart" id="chart-{{.ID}}">
<img alt="{{.Title}}" src="{{.Src}}" width="{{.Width}}" height="{{.Height}}">
<figcaption>{{.Title}}</figcaption>
</figure>
{{end}}<table id="target-metrics"><thead><tr><th>level</th><th>QPS</th><th>CPU (cores)</th><th>RSS (MiB)</th><th>goroutines (max)</th><th>heap in use (MiB)</th><th>GCs</th><th>mean GC pause</th></tr></thead><tbody>
{{range .Rows}}<tr><td>{{.Label}}</td><td>{{.QPS}}</td><td>{{.CPU}}</td><td>{{.RSS}}</td><td>{{.Goroutines}}</td><td>{{.Heap}}</td><td>{{.GCs}}</td><td>{{.Pause}}</td></tr>
{{end}}</tbody></table>
<p class="note">Scraped from {{.URL}} every second; CPU is the rate of process_cpu_seconds_total. A dash: the target does not expose that metric.</p>`))
})

type metricsRow struct{ Label, QPS, CPU, RSS, Goroutines, Heap, GCs, Pause string }

// metricsSection charts and tabulates the target's metrics, or "" when none were scraped.
func metricsSection(r *result.Run) template.HTML {
	tc := r.Target
	var rows []metricsRow
	var labels []string
	var qps, cpu, gor []float64
	for _, s := range r.Steps {
		ts := tc.Step(s.Label, s.Rep)
		if ts == nil || ts.Summary == nil || ts.Summary.Points == 0 {
			continue
		}
		m := ts.Summary
		rows = append(rows, metricsRow{
			Label: stepName(s), QPS: fmt.Sprintf("%.2f", s.QPS()),
			CPU: statText(m.CPUCores, 1, "%.2f"), RSS: statText(m.RSSBytes, 1<<20, "%.1f"),
			Goroutines: maxText(m.Goroutines), Heap: statText(m.HeapInuseBytes, 1<<20, "%.1f"),
			GCs: fmt.Sprintf("%.0f", m.GCs), Pause: pauseText(m.GCPauseMeanSeconds),
		})
		labels = append(labels, stepName(s))
		qps = append(qps, s.QPS())
		cpu = append(cpu, statMean(m.CPUCores))
		gor = append(gor, statMax(m.Goroutines))
	}
	if len(rows) == 0 {
		return ""
	}
	var charts []htmlChart
	add := func(id, title string, c chart.Chart) {
		if c.Validate() != nil {
			return
		}
		if hc, err := embedChart(id, title, c); err == nil {
			charts = append(charts, hc)
		}
	}
	x, cpuT, gorT, rssT, heapT, pauseT, marks := metricsTimeline(r)
	if len(marks) < 2 {
		marks = nil // one step: nothing to tell apart
	}
	if len(x) > 1 {
		// apiperf's requests/sec from its intervals, on the same time axis as the target's.
		qpsT := qpsAt(r, metricsStart(r), x)
		add("target_cpu_time", "Target CPU and apiperf's requests/sec over time", chart.Chart{
			Title: "Target CPU and requests/sec", XLabel: "seconds", YLabel: "CPU (cores)", YRightLabel: "Requests/sec", XNum: x,
			Series: []chart.Series{{Name: "CPU (cores)", Y: cpuT}, {Name: "Requests/sec", Y: qpsT, Right: true}}, Marks: marks,
		})
		add("target_goroutines_time", "Target goroutines and apiperf's requests/sec over time", chart.Chart{
			Title: "Target goroutines and requests/sec", XLabel: "seconds", YLabel: "goroutines", YRightLabel: "Requests/sec", XNum: x,
			Series: []chart.Series{{Name: "goroutines", Y: gorT}, {Name: "Requests/sec", Y: qpsT, Right: true}}, Marks: marks,
		})
		add("target_memory_time", "Target memory and GC pauses over time", chart.Chart{
			Title: "Target memory and GC", XLabel: "seconds", YLabel: "MiB", YRightLabel: "GC pause (ms per interval)", XNum: x,
			Series: []chart.Series{{Name: "RSS (MiB)", Y: rssT}, {Name: "heap in use (MiB)", Y: heapT}, {Name: "GC pause (ms)", Y: pauseT, Right: true}},
			Marks:  marks,
		})
	}
	if len(labels) > 1 {
		add("target_levels", "Target CPU, goroutines and QPS per level", chart.Chart{
			Title: "Target per level", XLabel: "level", YLabel: "CPU (cores) / goroutines (max)", YRightLabel: "Requests/sec", X: labels,
			Series: []chart.Series{{Name: "CPU (cores)", Y: cpu}, {Name: "goroutines (max)", Y: gor}, {Name: "QPS", Y: qps, Right: true}},
		})
	}
	var b bytes.Buffer
	data := struct {
		Charts []htmlChart
		Rows   []metricsRow
		URL    string
	}{charts, rows, tc.Metrics}
	if err := metricsTmpl().Execute(&b, data); err != nil {
		return template.HTML(template.HTMLEscapeString(err.Error()))
	}
	return template.HTML(b.String())
}

// metricsStart is the origin of metricsTimeline's axis: the first scraped step's start.
func metricsStart(r *result.Run) time.Time {
	for _, ts := range r.Target.Steps {
		if ts.Series != nil && len(ts.Series.Points) > 0 {
			return ts.Start
		}
	}
	return time.Time{}
}

// metricsTimeline joins the steps' series on one time axis (seconds since the first
// step), with a gap (NaN) between steps, and marks where each step starts.
func metricsTimeline(r *result.Run) (x, cpu, gor, rss, heap, pause []float64, marks []chart.Mark) {
	var t0 time.Time
	for _, ts := range r.Target.Steps {
		if ts.Series == nil || len(ts.Series.Points) == 0 {
			continue
		}
		if t0.IsZero() {
			t0 = ts.Start
		} else {
			last := x[len(x)-1]
			x, cpu, gor, rss, heap, pause = append(x, last), append(cpu, math.NaN()), append(gor, math.NaN()),
				append(rss, math.NaN()), append(heap, math.NaN()), append(pause, math.NaN())
		}
		base := ts.Start.Sub(t0).Seconds()
		label := ts.Label
		if ts.Rep > 0 {
			label = fmt.Sprintf("%s #%d", ts.Label, ts.Rep+1)
		}
		marks = append(marks, chart.Mark{At: base, Label: label})
		for _, p := range ts.Series.Points {
			x = append(x, base+p.Offset.Seconds())
			cpu = append(cpu, orNaN(p.CPUCores, 1))
			gor = append(gor, orNaN(p.Goroutines, 1))
			rss = append(rss, orNaN(p.RSSBytes, 1<<20))
			heap = append(heap, orNaN(p.HeapInuseBytes, 1<<20))
			pause = append(pause, orNaN(p.GCPauseSeconds, 1e-3))
		}
	}
	return
}

func orNaN(v *float64, div float64) float64 {
	if v == nil {
		return math.NaN()
	}
	return *v / div
}

func stepName(s *measure.Step) string {
	if s.Rep > 0 {
		return fmt.Sprintf("%s #%d", s.Label, s.Rep+1)
	}
	return s.Label
}

func statText(s *profcap.Stat, div float64, format string) string {
	if s == nil {
		return "-"
	}
	return fmt.Sprintf(format, s.Mean/div)
}

func maxText(s *profcap.Stat) string {
	if s == nil {
		return "-"
	}
	return fmt.Sprintf("%.0f", s.Max)
}

func statMean(s *profcap.Stat) float64 {
	if s == nil {
		return math.NaN()
	}
	return s.Mean
}

func statMax(s *profcap.Stat) float64 {
	if s == nil {
		return math.NaN()
	}
	return s.Max
}

func pauseText(s *float64) string {
	if s == nil {
		return "-"
	}
	return time.Duration(*s * float64(time.Second)).Round(time.Microsecond).String()
}
