package report

import (
	"bytes"
	"fmt"
	"html/template"
	"sync"

	"github.com/apiperf/apiperf/report/chart"
	"github.com/apiperf/apiperf/result"
)

var processTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("process").Parse(`{{range .Charts}}<figure class="chart" id="chart-{{.ID}}">
<img alt="{{.Title}}" src="{{.Src}}" width="{{.Width}}" height="{{.Height}}">
<figcaption>{{.Title}}</figcaption>
</figure>
{{end}}<table id="target-process"><thead><tr><th>level</th><th>QPS</th><th>CPU (cores)</th><th>CPU max</th><th>RSS (MiB)</th><th>RSS max</th></tr></thead><tbody>
{{range .Rows}}<tr><td>{{.Label}}</td><td>{{.QPS}}</td><td>{{.CPU}}</td><td>{{.CPUMax}}</td><td>{{.RSS}}</td><td>{{.RSSMax}}</td></tr>
{{end}}</tbody></table>
<p class="note">Sampled from {{.Source}} every second ({{.Found}}): CPU is user + system time per second of the process, RSS its resident memory. Works for any process on this machine.</p>`))
})

type processRow struct{ Label, QPS, CPU, CPUMax, RSS, RSSMax string }

// foundBy says how the target's process was found, for the note under its table.
func foundBy(pidSource string) string {
	switch pidSource {
	case "", "--target-pid":
		return "--target-pid"
	}
	return "found " + pidSource // e.g. "listening on 127.0.0.1:8080": apiperf found it by itself
}

// processSections tabulates and charts the target process's CPU and RSS beside QPS per
// level (--target-pid); none without samples.
func processSections(r *result.Run) []Section {
	if r.Target == nil {
		return nil
	}
	var rows []processRow
	var labels []string
	var qps, cpu, rss []float64
	source := ""
	for _, s := range r.Steps {
		ts := r.Target.Step(s.Label, s.Rep)
		if ts == nil || ts.ProcessSummary == nil || ts.ProcessSummary.CPUCores == nil || ts.ProcessSummary.RSSBytes == nil {
			continue
		}
		if ts.Process != nil {
			source = ts.Process.URL
		}
		p := ts.ProcessSummary
		rows = append(rows, processRow{Label: stepName(s), QPS: fmt.Sprintf("%.2f", s.QPS()),
			CPU: fmt.Sprintf("%.2f", p.CPUCores.Mean), CPUMax: fmt.Sprintf("%.2f", p.CPUCores.Max),
			RSS: fmt.Sprintf("%.1f", p.RSSBytes.Mean/(1<<20)), RSSMax: fmt.Sprintf("%.1f", p.RSSBytes.Max/(1<<20))})
		labels = append(labels, stepName(s))
		qps = append(qps, s.QPS())
		cpu = append(cpu, p.CPUCores.Mean)
		rss = append(rss, p.RSSBytes.Max/(1<<20))
	}
	if len(rows) == 0 {
		return nil
	}
	var charts []htmlChart
	if len(labels) > 1 {
		for _, c := range []struct {
			id, title, y string
			vals         []float64
		}{{"target_process_cpu", "Target process CPU and QPS per level", "CPU (cores)", cpu},
			{"target_process_rss", "Target process RSS and QPS per level", "RSS max (MiB)", rss}} {
			ch := chart.Chart{Title: c.title, XLabel: "level", YLabel: c.y, YRightLabel: "Requests/sec", X: labels,
				Series: []chart.Series{{Name: c.y, Y: c.vals}, {Name: "QPS", Y: qps, Right: true}}}
			if ch.Validate() != nil {
				continue
			}
			if hc, err := embedChart(c.id, c.title, ch); err == nil {
				charts = append(charts, hc)
			}
		}
	}
	var b bytes.Buffer
	data := struct {
		Charts []htmlChart
		Rows   []processRow
		Source string
		Found  string // how the process was found: --target-pid, or the port it listened on
	}{charts, rows, source, foundBy(r.Target.PIDSource)}
	if err := processTmpl().Execute(&b, data); err != nil {
		return []Section{{Title: "Target process", Body: template.HTML(template.HTMLEscapeString(err.Error()))}}
	}
	return []Section{{Title: "Target process (CPU and RSS from /proc)", Body: template.HTML(b.String())}}
}
