package report

import (
	"bytes"
	"fmt"
	"html/template"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/apiperf/apiperf/compare"
	"github.com/apiperf/apiperf/conditions"
	"github.com/apiperf/apiperf/report/chart"
	"github.com/apiperf/apiperf/result"
)

// withConditions adds a comparison's lines on its runs' conditions to its notes and its
// warnings ("not comparable", busy machines) to its warnings; both unchanged for nil.
func withConditions(notes, warnings []string, c *compare.ConditionsCheck) ([]string, []string) {
	if c == nil {
		return notes, warnings
	}
	return append(append([]string(nil), notes...), c.Lines...), append(append([]string(nil), warnings...), c.Warnings...)
}

// conditionsTmpl is the Conditions section: what is off, the machine, the target's build,
// the busy-machine chart and the table of every step.
var conditionsTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("conditions").Parse(`{{if .Unknown}}<p id="conditions-unknown">{{.Unknown}}</p>{{else}}{{if .Off}}<ul class="warn" id="conditions-off">
{{range .Off}}<li>{{.}}</li>
{{end}}</ul>
{{end}}<dl class="spec" id="conditions">
{{range .Facts}}<dt>{{.Name}}</dt><dd>{{.Value}}</dd>
{{end}}</dl>
{{range .Charts}}<figure class="chart" id="chart-{{.ID}}">
<img alt="{{.Title}}" src="{{.Src}}" width="{{.Width}}" height="{{.Height}}">
<figcaption>{{.Title}}</figcaption>
</figure>
{{end}}{{if .Rows}}<table id="conditions-steps"><thead><tr><th>level</th><th>machine busy</th><th>apiperf</th><th>target</th><th>other processes</th><th>others max</th><th>steal</th><th>apiperf waited for a CPU</th></tr></thead><tbody>
{{range .Rows}}<tr><td>{{.Label}}</td><td>{{.Busy}}</td><td>{{.Apiperf}}</td><td>{{.Target}}</td><td>{{.Others}}</td><td>{{.OthersMax}}</td><td>{{.Steal}}</td><td>{{.RunWait}}</td></tr>
{{end}}</tbody></table>
<p class="note">CPU in cores, from /proc/stat (the whole machine) and /proc/PID/stat (apiperf, the target) sampled every second of each step: other processes are the machine's busy time less apiperf's and the target's{{if .HasTarget}}; where the target's process is not known, its CPU is among the others'{{end}}. A step where others took more than {{.Threshold}} cores ran on a busy machine.</p>{{end}}{{end}}`))
})

type conditionsFact struct{ Name, Value string }

type conditionsRow struct{ Label, Busy, Apiperf, Target, Others, OthersMax, Steal, RunWait string }

// conditionsSections is the Conditions section of a run's report: what it was measured
// on, or that this is unknown (a run.json older than the record).
func conditionsSections(r *result.Run) []Section {
	c := r.Conditions
	data := struct {
		Unknown   string
		Off       []string
		Facts     []conditionsFact
		Charts    []htmlChart
		Rows      []conditionsRow
		HasTarget bool
		Threshold string
	}{Threshold: fmt.Sprintf("%.2f", conditions.DefaultThresholds.OthersCores)}
	if c == nil {
		data.Unknown = conditions.Unknown + "."
	} else {
		data.Off = c.Off(conditions.DefaultThresholds)
		data.Facts = conditionsFacts(c)
		cores := func(v float64) string { return fmt.Sprintf("%.2f", v) }
		var labels []string
		var others, othersMax, self, tgt []float64
		for _, s := range c.Steps {
			row := conditionsRow{Label: s.Name(), Busy: cores(s.Busy), Apiperf: cores(s.Apiperf), Target: "-", Others: cores(s.Others),
				OthersMax: cores(s.OthersMax), Steal: fmt.Sprintf("%.1f%%", s.StealPct), RunWait: cores(s.RunWait)}
			t := math.NaN()
			if s.Target != nil {
				row.Target, t = cores(*s.Target), *s.Target
			}
			if s.OthersHasTarget {
				row.Others += " (with the target)"
				data.HasTarget = true
			}
			data.Rows = append(data.Rows, row)
			labels = append(labels, s.Name())
			others, othersMax, self, tgt = append(others, s.Others), append(othersMax, s.OthersMax), append(self, s.Apiperf), append(tgt, t)
		}
		ch := chart.Chart{Title: "Busy machine: CPU per level", XLabel: "level", YLabel: "CPU (cores)", X: labels,
			Series: []chart.Series{{Name: "other processes", Y: others}, {Name: "other processes, max", Y: othersMax, Dashed: true},
				{Name: "apiperf", Y: self}, {Name: "target", Y: tgt}},
			RefLines: []chart.RefLine{{Y: conditions.DefaultThresholds.OthersCores, Label: "busy above"}}}
		if len(labels) > 0 && ch.Validate() == nil {
			if hc, err := embedChart("conditions_busy", ch.Title, ch); err == nil {
				data.Charts = append(data.Charts, hc)
			}
		}
	}
	var b bytes.Buffer
	if err := conditionsTmpl().Execute(&b, data); err != nil {
		return []Section{{Title: "Conditions", Body: template.HTML(template.HTMLEscapeString(err.Error()))}}
	}
	return []Section{{Title: "Conditions", Body: template.HTML(b.String())}}
}

// conditionsFacts lists the generator's machine and the target's build, field by field.
func conditionsFacts(c *conditions.Record) []conditionsFact {
	g := c.Generator
	facts := []conditionsFact{
		{"CPU", fmt.Sprintf("%s, %d logical CPUs", orDash(g.CPUModel), g.CPUs)},
		{"kernel", orDash(g.Kernel) + " (" + g.Arch + ")"},
		{"governor", orDash(g.Governor)},
		{"apiperf", fmt.Sprintf("%s (%s), GOMAXPROCS %d, %d threads", g.Apiperf, g.GoVersion, g.GOMAXPROCS, g.Threads)},
		{"apiperf's cgroup", limits(g.CPULimit, g.MemoryLimit)},
		{"load average at the start", fmt.Sprintf("%.2f %.2f %.2f", g.Load[0], g.Load[1], g.Load[2])},
	}
	t := c.Target
	if t == nil {
		return append(facts, conditionsFact{"target", "unknown (no --target-pid, no process found listening on its address, no pprof cmdline)"})
	}
	how := t.Found
	if t.PID > 0 {
		how = fmt.Sprintf("process %d, %s", t.PID, t.Found)
	}
	facts = append(facts, conditionsFact{"target", how})
	if t.Executable != "" {
		facts = append(facts, conditionsFact{"target executable", t.Executable})
	}
	if b := t.Build; b != nil {
		facts = append(facts, conditionsFact{"target build", b.String()})
		keys := slices.Sorted(maps.Keys(b.Settings))
		var set []string
		for _, k := range keys {
			set = append(set, k+"="+b.Settings[k])
		}
		if len(set) > 0 {
			facts = append(facts, conditionsFact{"target build settings", strings.Join(set, " ")})
		}
	}
	if t.GOMAXPROCS > 0 {
		facts = append(facts, conditionsFact{"target GOMAXPROCS", fmt.Sprintf("%d (%s)", t.GOMAXPROCS, t.GOMAXPROCSFrom)})
	}
	if t.PID > 0 {
		facts = append(facts, conditionsFact{"target's cgroup", limits(t.CPULimit, t.MemoryLimit)})
	}
	if len(t.Cmdline) > 0 {
		facts = append(facts, conditionsFact{"target command line", strings.Join(t.Cmdline, " ")})
	}
	for _, n := range t.Notes {
		facts = append(facts, conditionsFact{"target note", n})
	}
	return facts
}

// limits prints cgroup limits: "CPU 1.5 cores, memory 512 MiB" or "no limits".
func limits(cpu float64, mem int64) string {
	var out []string
	if cpu > 0 {
		out = append(out, fmt.Sprintf("CPU %.2f cores", cpu))
	}
	if mem > 0 {
		out = append(out, fmt.Sprintf("memory %d MiB", mem>>20))
	}
	if len(out) == 0 {
		return "no limits"
	}
	return strings.Join(out, ", ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
