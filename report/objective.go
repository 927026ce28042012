package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"sync"

	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/sweep"
)

// ObjectiveLines writes the objective's outcome: one line when every term was met at every
// level, else one line per failed term and level with the measured value, the budget and by
// how much. Nothing when the run had no objective.
func ObjectiveLines(w io.Writer, r *result.Run) error {
	rep := r.Objectives
	if rep == nil {
		return nil
	}
	failed := rep.Failed()
	var err error
	pr := func(format string, a ...any) {
		if err == nil {
			_, err = fmt.Fprintf(w, format, a...)
		}
	}
	if len(failed) == 0 {
		pr("Objective %s: met (%s)\n", rep.Objective, Plural(len(rep.Results), "check"))
		return err
	}
	pr("Objective %s: NOT MET (%d of %s failed)\n", rep.Objective, len(failed), Plural(len(rep.Results), "check"))
	for _, f := range failed {
		if f.Level != "" {
			pr("  FAIL %s at %s: %s\n", f.Term, f.Level, f.Reason)
		} else {
			pr("  FAIL %s: %s\n", f.Term, f.Reason)
		}
	}
	return err
}

var objectiveTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("objective").Parse(`<p id="objective-outcome" class="{{if .Failed}}warn{{end}}">Objective <code>{{.Objective}}</code>: {{if .Failed}}<strong>not met</strong> ({{.Failed}} of {{.Total}} checks failed){{else}}met at every level ({{.Total}} checks){{end}}</p>
<table id="objective-checks"><thead><tr><th>level</th><th>term</th><th>measured</th><th>outcome</th></tr></thead><tbody>
{{range .Results}}<tr{{if not .Pass}} class="fail"{{end}}><td>{{.Level}}</td><td><code>{{.Term}}</code></td><td>{{.Measured}}</td><td>{{if .Pass}}met{{else}}FAIL: {{.Reason}}{{end}}</td></tr>
{{end}}</tbody></table>
`))
})

// objectiveSections is the Objective section of report.html: the outcome and every check.
func objectiveSections(r *result.Run) []Section {
	rep := r.Objectives
	if rep == nil {
		return nil
	}
	var b bytes.Buffer
	d := struct {
		Objective     string
		Failed, Total int
		Results       []sweep.TermResult
	}{rep.Objective.String(), len(rep.Failed()), len(rep.Results), rep.Results}
	if err := objectiveTmpl().Execute(&b, d); err != nil {
		return nil
	}
	return []Section{{Title: "Objective", Body: template.HTML(b.String())}}
}
