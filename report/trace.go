package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"path"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/apiperf/apiperf/compare"
	"github.com/apiperf/apiperf/exectrace"
	"github.com/apiperf/apiperf/profcap"
	"github.com/apiperf/apiperf/result"
)

// TraceLine is one traced level's summary line, e.g. "Target trace at c=8 (1s): GC 41.0
// cycles/s, STW 1.2ms (max 310us), GC CPU 12% (assist 3%), sched latency p50 8us p99 1.2ms,
// GOMAXPROCS 2 (1.4 busy)", followed by the stack that waited longest on sync, if any.
func TraceLine(s *profcap.StepRecord) string {
	t := s.Trace
	line := fmt.Sprintf("Target trace at %s (%s): %s", s.Label, exectrace.Short(t.Length), t.Summary.Line())
	if g := t.Summary.Group(exectrace.GroupSync); g != nil && len(g.Stacks) > 0 {
		line += fmt.Sprintf(", top sync wait %s (%s)", g.Stacks[0].Site(), exectrace.Short(g.Stacks[0].Time))
	}
	return line
}

// traceText writes the trace line of every traced step.
func traceText(w io.Writer, tc *profcap.Record) {
	for _, s := range tc.Traced() {
		fmt.Fprintln(w, TraceLine(s))
	}
}

// traceTmpl renders one traced step; html/template escapes every name the target made.
var traceTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("trace").Parse(`<div class="target-trace" id="trace-{{.ID}}">
<p>{{.Line}}</p>
<table class="top" id="trace-summary-{{.ID}}"><tbody>
{{range .Facts}}<tr><th class="l">{{.Name}}</th><td>{{.Value}}</td></tr>
{{end}}</tbody></table>
{{if .States}}<h3>Time goroutines spent, by state</h3>
<table class="top" id="trace-states-{{.ID}}"><thead><tr><th class="l">state</th><th>time</th><th>share</th></tr></thead><tbody>
{{range .States}}<tr><td class="l">{{.Name}}</td><td>{{.Time}}</td><td>{{.Pct}}</td></tr>
{{end}}</tbody></table>{{end}}
{{range .Groups}}<h3>{{.Title}}</h3>
<table class="top"><thead><tr><th>time</th><th>count</th><th class="l">site</th><th class="l">stack</th></tr></thead><tbody>
{{range .Rows}}<tr><td>{{.Time}}</td><td>{{.Count}}</td><td class="l fn">{{.Site}}</td><td class="l fn"><details><summary>frames</summary>{{range .Frames}}{{.}}<br>{{end}}</details></td></tr>
{{end}}</tbody></table>{{end}}
{{if .Regions}}<h3>Regions (trace.WithRegion)</h3>{{template "spans" .Regions}}{{end}}
{{if .Tasks}}<h3>Tasks (trace.NewTask)</h3>{{template "spans" .Tasks}}{{end}}
{{with .File}}<p class="note">Trace, beside this report: <code>{{.}}</code> (open with <code>go tool trace</code>)</p>{{end}}
</div>{{define "spans"}}<table class="top"><thead><tr><th class="l">name</th><th>count</th><th>total</th><th>mean</th><th>max</th></tr></thead><tbody>
{{range .}}<tr><td class="l fn">{{.Name}}</td><td>{{.Count}}</td><td>{{.Total}}</td><td>{{.Mean}}</td><td>{{.Max}}</td></tr>
{{end}}</tbody></table>{{end}}`))
})

type nameValue struct{ Name, Value string }

type stateRow struct{ Name, Time, Pct string }

type stackRow struct {
	Time, Count, Site string
	Frames            []string
}

type stackGroup struct {
	Title string
	Rows  []stackRow
}

type spanRow struct{ Name, Count, Total, Mean, Max string }

type traceView struct {
	ID, Line, File string
	Facts          []nameValue
	States         []stateRow
	Groups         []stackGroup
	Regions, Tasks []spanRow
}

// groupTitles say what each blocking group is, as go tool trace -pprof names them.
var groupTitles = map[string]string{
	exectrace.GroupSync:    "Top sync blocking stacks (channels, select, mutexes; go tool trace -pprof=sync)",
	exectrace.GroupNet:     "Top network blocking stacks (go tool trace -pprof=net)",
	exectrace.GroupSyscall: "Top syscall stacks (go tool trace -pprof=syscall)",
	exectrace.GroupSched:   "Top scheduler wait stacks (runnable, waiting for a P; go tool trace -pprof=sched)",
	exectrace.GroupAssist:  "Where goroutines were drafted into GC mark assist (allocating)",
}

// traceSections renders every traced step of r: the summary, states, stacks, regions and tasks.
func traceSections(r *result.Run) []Section {
	var out []Section
	for i, ts := range r.Target.Traced() {
		body, err := traceSection(ts, i)
		if err != nil {
			body = template.HTML(template.HTMLEscapeString(err.Error()))
		}
		out = append(out, Section{Title: "Target execution trace at " + ts.Label, Body: body})
	}
	return out
}

func traceSection(ts *profcap.StepRecord, i int) (template.HTML, error) {
	t := ts.Trace
	s := t.Summary
	v := traceView{ID: fmt.Sprint(i), Line: TraceLine(ts)}
	if i := slices.IndexFunc(ts.Files, isTraceFile); i >= 0 {
		v.File = ts.Files[i]
	}
	procs := "unknown"
	if s.GOMAXPROCS > 0 {
		procs = fmt.Sprint(s.GOMAXPROCS)
	}
	v.Facts = []nameValue{
		{"traced", fmt.Sprintf("%s, starting %s into the level (%.1f MiB)", exectrace.Short(s.Span), exectrace.Short(t.From), float64(t.Bytes)/(1<<20))},
		{"GC cycles", fmt.Sprintf("%d (%.1f per second)", s.GCCycles, s.GCPerSecond())},
		{"GC stop-the-world", fmt.Sprintf("%d pauses, %s in total, longest %s", s.STWCount, exectrace.Short(s.STWTotal), exectrace.Short(s.STWMax))},
		{"GC CPU (share of goroutine run time)", fmt.Sprintf("%.1f%%: background workers %s, mark assist %s (%.1f%%)", s.GCCPUPct(), exectrace.Short(s.GCWorkers), exectrace.Short(s.GCAssist), s.AssistPct())},
		{"scheduler latency (runnable to running)", fmt.Sprintf("p50 %s, p99 %s, max %s over %d wake-ups", exectrace.Short(s.Sched.P50), exectrace.Short(s.Sched.P99), exectrace.Short(s.Sched.Max), s.Sched.Count)},
		{"GOMAXPROCS and busy Ps", fmt.Sprintf("%s, %.2f Ps running on average (goroutines, their syscalls, looking for work)", procs, s.BusyPs)},
	}
	for _, st := range s.States {
		v.States = append(v.States, stateRow{st.State, exectrace.Short(st.Time), fmt.Sprintf("%.1f%%", st.Pct)})
	}
	for _, g := range s.Blocking {
		sg := stackGroup{Title: groupTitles[g.Group]}
		for _, b := range g.Stacks {
			row := stackRow{Time: exectrace.Short(b.Time), Count: fmt.Sprint(b.Count), Site: b.Site()}
			for _, f := range b.Frames {
				row.Frames = append(row.Frames, fmt.Sprintf("%s %s:%d", f.Func, f.File, f.Line))
			}
			sg.Rows = append(sg.Rows, row)
		}
		v.Groups = append(v.Groups, sg)
	}
	v.Regions, v.Tasks = spanRows(s.Regions), spanRows(s.Tasks)
	var b bytes.Buffer
	if err := traceTmpl().Execute(&b, v); err != nil {
		return "", fmt.Errorf("rendering trace of %s: %w", ts.Label, err)
	}
	return template.HTML(b.String()), nil
}

// isTraceFile: a saved trace.out among a step's files.
func isTraceFile(f string) bool { return path.Base(f) == exectrace.FileName }

func spanRows(spans []exectrace.Span) []spanRow {
	var out []spanRow
	for _, s := range spans {
		out = append(out, spanRow{s.Name, fmt.Sprint(s.Count), exectrace.Short(s.Total), exectrace.Short(s.Mean), exectrace.Short(s.Max)})
	}
	return out
}

// TraceDiffText writes two runs' trace summaries side by side, one figure a line:
// "GC cycles per second  41.0 -> 6.0"; nothing when d is nil.
func TraceDiffText(w io.Writer, d *compare.TraceDiff) error {
	return render(w, "the trace diff", func(w io.Writer) { traceDiffText(w, d) })
}

func traceDiffText(w io.Writer, d *compare.TraceDiff) {
	if d == nil {
		return
	}
	fmt.Fprintf(w, "\nTarget execution trace, A at %s -> B at %s:\n", d.LevelA, d.LevelB)
	for _, r := range d.Rows {
		fmt.Fprintf(w, "  %-26s %10s -> %s\n", r.Name, r.Format(r.Values[0]), r.Format(r.Values[1]))
	}
}

// compareTraceText writes the variants' trace summaries side by side, a column per
// variant; nothing when none has a trace.
func compareTraceText(w io.Writer, m *compare.Multi) error {
	header, rows := compareTraceCells(m)
	if rows == nil {
		return nil
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, row := range append([][]string{header}, rows...) {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing trace comparison: %w", err)
	}
	return nil
}

// compareTraceCells is the trace comparison as cells: a header (the variants and the
// levels traced) and a row per figure; no rows when no variant has a trace.
func compareTraceCells(m *compare.Multi) (header []string, rows [][]string) {
	sums := make([]*exectrace.Summary, len(m.Variants))
	header = []string{"execution trace"}
	traced := false
	for i, v := range m.Variants {
		sums[i] = v.Trace
		label := v.TraceLevel
		if v.Trace == nil {
			label = "no trace"
		}
		header = append(header, v.Name+" ("+label+")")
		traced = traced || v.Trace != nil
	}
	if !traced {
		return header, nil
	}
	for _, r := range compare.TraceRows(sums) {
		row := []string{r.Name}
		for i, val := range r.Values {
			cell := "-"
			if sums[i] != nil {
				cell = r.Format(val)
			}
			row = append(row, cell)
		}
		rows = append(rows, row)
	}
	return header, rows
}
