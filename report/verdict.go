package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"strings"
	"sync"

	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/verdict"
)

// WriteVerdict writes the verdict as text: each claim with its confidence, evidence and
// fix, Little's law where it does not hold, and what could not be judged.
func WriteVerdict(w io.Writer, v *verdict.Verdict) error {
	return render(w, "the verdict", func(w io.Writer) { writeVerdict(w, v) })
}

func writeVerdict(w io.Writer, v *verdict.Verdict) {
	if v == nil {
		return
	}
	if len(v.Claims) == 1 { // the headline would only repeat the claim's first line
		fmt.Fprint(w, "verdict: ")
	} else {
		fmt.Fprintln(w, v.Headline())
		fmt.Fprint(w, "  ")
	}
	for i, c := range v.Claims {
		if i > 0 {
			fmt.Fprint(w, "  ")
		}
		fmt.Fprintf(w, "%s (%s): %s\n", c.Kind, c.Confidence, c.Summary)
		for _, e := range c.Evidence {
			fmt.Fprintf(w, "    - %s\n", e)
		}
		if c.Fix != "" {
			fmt.Fprintf(w, "    fix: %s\n", c.Fix)
		}
	}
	var off []string
	for _, l := range v.Little {
		if !l.OK {
			off = append(off, l.Label+": "+l.Note)
		}
	}
	if len(off) > 0 {
		fmt.Fprintln(w, "  Little's law (in flight = QPS x mean latency) does not hold at:")
		for _, o := range off {
			fmt.Fprintf(w, "    - %s\n", o)
		}
	}
	if v.SharedMachine() {
		fmt.Fprintln(w, "  Other processes took CPU on this machine (cores per level):")
		for _, m := range v.Machine {
			fmt.Fprintf(w, "    - %s: %s\n", m.Label, m)
		}
	}
	for _, s := range v.Silent {
		fmt.Fprintf(w, "  not judged: %s\n", s)
	}
}

// VerdictText is WriteVerdict into a string.
func VerdictText(v *verdict.Verdict) string {
	var b strings.Builder
	writeVerdict(&b, v)
	return b.String()
}

var verdictTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("verdict").Parse(`{{if ne (len .V.Claims) 1}}<p class="verdict-headline">{{.V.Headline}}</p>
{{end}}{{range .V.Claims}}<div class="claim" data-kind="{{.Kind}}"><h3>{{.Kind}} <span class="confidence">({{.Confidence}} confidence{{if .Level}}, from {{.Level}}{{end}})</span></h3>
<p>{{.Summary}}</p>
<ul>{{range .Evidence}}<li>{{.}}</li>{{end}}</ul>
{{if .Fix}}<p class="note">Try: {{.Fix}}</p>{{end}}</div>
{{end}}<table id="little"><thead><tr><th>level</th><th>load</th><th>in flight (QPS x mean)</th><th>ratio</th><th>Little's law</th></tr></thead><tbody>
{{range .V.Little}}<tr><td>{{.Label}}</td><td>{{printf "%g" .Load}}</td><td>{{printf "%.1f" .InFlight}}</td><td>{{if .Ratio}}{{printf "%.2f" .Ratio}}{{else}}-{{end}}</td><td>{{if .OK}}consistent{{else}}off{{end}}{{if .Note}}: {{.Note}}{{end}}</td></tr>
{{end}}</tbody></table>
{{if .V.SharedMachine}}<p class="note">Other processes took CPU on this machine:</p><table id="machine"><thead><tr><th>level</th><th>CPUs</th><th>busy</th><th>apiperf</th><th>target</th><th>others</th><th>stolen</th></tr></thead><tbody>
{{range .V.Machine}}<tr{{if .Shared}} class="shared"{{end}}><td>{{.Label}}</td><td>{{.CPUs}}</td><td>{{printf "%.2f" .Busy}}</td><td>{{printf "%.2f" .Apiperf}}</td><td>{{if .TargetUnknown}}?{{else}}{{printf "%.2f" .Target}}{{end}}</td><td>{{printf "%.2f" .Others}}</td><td>{{printf "%.2f" .Steal}}</td></tr>
{{end}}</tbody></table>
{{end}}{{if .V.Silent}}<p class="note">Not judged:</p><ul class="silent">{{range .V.Silent}}<li>{{.}}</li>{{end}}</ul>{{end}}`))
})

// verdictSection is the report's verdict, shown first after the headline; nil when the run
// was not judged. Its title asks "why it is slow" only when a claim says something was.
func verdictSection(r *result.Run) *Section {
	if r.Verdict == nil {
		return nil
	}
	title := "Verdict"
	if len(r.Verdict.Claims) > 0 {
		title = "Verdict: why it is slow"
	}
	var b bytes.Buffer
	if err := verdictTmpl().Execute(&b, struct{ V *verdict.Verdict }{r.Verdict}); err != nil {
		return &Section{Title: title, Body: template.HTML(template.HTMLEscapeString(err.Error()))}
	}
	return &Section{Title: title, Body: template.HTML(b.String())}
}
