package report

import (
	"bytes"
	"embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"iter"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/apiperf/apiperf/report/chart"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/scenario"
	"github.com/apiperf/apiperf/sweep"
)

//go:embed templates
var templateFS embed.FS

// templates are parsed once, on first use (not at program start: a run that writes no HTML
// report does not pay for them); html/template escapes everything that is not typed as safe.
var templates = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("").ParseFS(templateFS, "templates/*.tmpl"))
})

func css() template.CSS {
	b, err := templateFS.ReadFile("templates/style.css")
	if err != nil {
		panic(err) // embedded at build time
	}
	return template.CSS(b)
}

// Section is a titled block of the HTML report, rendered by a later stage (profiles, flame
// graph, target metrics, endpoints). Body must already be safe HTML.
type Section struct {
	Title string
	Body  template.HTML
}

// extraSections is where the parts of the report that come from other packages are
// added: profile top tables and the flame graph and target metrics charts (r.Target),
// per-endpoint tables (Step.Endpoints) and the streams' table (Step.Streams). They appear after the level table.
// The verdict is not among them: it comes first, right after the headline (report/verdict.go).
// Each is made when the page reaches it and dropped once written: a sweep has sections per
// step, and a 2,000-level run held 45 MB of them at once.
func extraSections(r *result.Run) iter.Seq[Section] {
	return func(yield func(Section) bool) {
		all := func(secs []Section) bool {
			for _, s := range secs {
				if !yield(s) {
					return false
				}
			}
			return true
		}
		each := func(secs iter.Seq[Section]) bool {
			for s := range secs {
				if !yield(s) {
					return false
				}
			}
			return true
		}
		_ = all(objectiveSections(r)) && // report/objective.go
			all(timelineSections(r)) && // report/timeline.go
			all(processSections(r)) && // report/process.go
			each(endpointSections(r)) && // report/endpoints.go
			all(streamSections(r)) && // report/stream_html.go
			all(conditionsSections(r)) &&
			all(workersSections(r)) && // report/workers.go
			each(exemplarSections(r)) && // report/exemplars_html.go
			each(timingSections(r)) &&
			all(targetSections(r)) // report/target.go
	}
}

type htmlChart struct {
	ID, Title     string
	Src           template.URL
	Width, Height int
}

type htmlLevel struct {
	Label, QPS, Mean, P50, P90, P99, P999, Success, Classic, Errors, Status, Notes string
	Reps                                                                           int
	Attempts                                                                       int64
}

type htmlReport struct {
	CSS                                           template.CSS
	Kind, Name, Method, URL, LevelName, Objective string
	Headline                                      []string
	Charts                                        []htmlChart
	Levels                                        []htmlLevel
	Open                                          bool
	Verdict                                       *Section          // first, after the headline; nil when not judged
	Sections                                      iter.Seq[Section] // made as the page is written
	Warnings                                      []string
	Load, Body, Tool, Host, Time                  string
	Headers                                       []string
	Command                                       string
	Run                                           *result.Run // for later template blocks
}

// HTML writes the report of run r as one self-contained page that works offline: headline
// (peak, knee, vs plain net/http), charts embedded as SVG data, a table per level, warnings,
// the spec and the command to reproduce. Everything from the user or the target is escaped.
func HTML(w io.Writer, r *result.Run) error { return writeHTML(w, r, r.Levels()) }

// writeHTML is HTML of run r whose levels rec are reduced already (WriteAll has them: a
// run without a sweep record reduces its steps anew at each r.Levels call).
func writeHTML(w io.Writer, r *result.Run, rec *sweep.Record) error {
	name := r.Name
	if name == "" {
		name = DefaultName(r)
	}
	r.Redact()
	d := htmlReport{
		CSS: css(), Kind: r.Kind, Name: name, Method: r.Scenario.MethodOrDefault(), URL: r.Scenario.URL,
		LevelName: xLabel(r.Load.OpenLoop()), Headline: headline(r, rec), Open: r.Load.OpenLoop(), Objective: rec.Objective.String(),
		Verdict: verdictSection(r), Sections: extraSections(r), Warnings: r.AllWarnings(),
		Load: specLoad(r, rec), Tool: r.Tool, Host: r.Host, Command: ShellQuote(r.Command), Run: r,
	}
	if r.Kind == "" {
		d.Kind = result.KindRun
	}
	if !r.Start.IsZero() {
		d.Time = r.Start.UTC().Format(time.RFC3339) + " to " + r.End.UTC().Format(time.RFC3339)
	}
	d.Body = r.Scenario.Body
	if r.Scenario.BodySize > 0 && d.Body == "" {
		d.Body = fmt.Sprintf("%s (%d bytes, sha256 %s)", scenario.Redacted, r.Scenario.BodySize, r.Scenario.BodySHA256)
	}
	if len(d.Body) > 2000 {
		d.Body = d.Body[:2000] + fmt.Sprintf("… (%d bytes in all)", len(r.Scenario.Body))
	}
	for _, h := range r.Scenario.Headers {
		d.Headers = append(d.Headers, h.Name+": "+h.Value)
	}
	for _, c := range runCharts(r, rec) {
		hc, err := embedChart(c.suffix, c.title, c.chart)
		if err != nil {
			return err
		}
		d.Charts = append(d.Charts, hc)
	}
	for i, l := range rec.Levels {
		d.Levels = append(d.Levels, htmlLevelOf(l, levelNotes(rec, i)))
	}
	if err := templates().ExecuteTemplate(w, "report", d); err != nil {
		return fmt.Errorf("writing report: %w", err)
	}
	return nil
}

// embedChart renders c as an SVG data URL for an <img>: the SVG cannot run anything there.
func embedChart(id, title string, c chart.Chart) (htmlChart, error) {
	var b bytes.Buffer
	if err := c.SVG(&b); err != nil {
		return htmlChart{}, fmt.Errorf("drawing chart %s: %w", id, err)
	}
	w, h := c.Width, c.Height
	if w == 0 {
		w = chart.DefaultWidth
	}
	if h == 0 {
		h = chart.DefaultHeight
	}
	const scheme = "data:image/svg+xml;base64,"
	var src strings.Builder // one copy of the encoded chart, not two
	src.Grow(len(scheme) + base64.StdEncoding.EncodedLen(b.Len()))
	src.WriteString(scheme)
	enc := base64.NewEncoder(base64.StdEncoding, &src)
	enc.Write(b.Bytes()) // a strings.Builder takes every write
	enc.Close()
	return htmlChart{ID: id, Title: title, Src: template.URL(src.String()), Width: w, Height: h}, nil
}

func htmlLevelOf(l sweep.Level, notes string) htmlLevel {
	return htmlLevel{
		Label: l.Label, Reps: l.Reps, Attempts: l.Attempts, QPS: fmt.Sprintf("%.2f", l.QPS),
		Mean: ms(l.MeanMillis()), P50: ms(l.Millis(l.P50)), P90: ms(l.Millis(l.P90)), P99: ms(l.Millis(l.P99)), P999: ms(l.Millis(l.P999)),
		Success: pct(l.SuccessPct()), Classic: pct(l.Classic), Errors: errorsText(l), Status: statusText(l.Status), Notes: notes,
	}
}

// levelNotes marks level i of rec: partial, generator-limited or -bound, the peak, the knee
// or the limit, e.g. "peak; knee". Every rendering of the levels shows the same notes.
func levelNotes(rec *sweep.Record, i int) string {
	var notes []string
	l := rec.Levels[i]
	if l.Interrupted {
		notes = append(notes, "interrupted (partial)")
	}
	if l.GeneratorLimited() {
		notes = append(notes, l.GeneratorLimit.Brief())
	}
	if l.GeneratorBound {
		notes = append(notes, "generator-bound (apiperf short of CPU)")
	}
	if i == rec.Peak {
		notes = append(notes, "peak")
	}
	if i == rec.Knee {
		notes = append(notes, "knee")
	}
	if i == rec.Limit && rec.Limit != rec.Knee {
		notes = append(notes, "largest meeting the objective")
	}
	return strings.Join(notes, "; ")
}

// ms prints milliseconds in wrk's units, "-" when unknown.
func ms(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return FormatTimeUS(v * 1000)
}

func pct(v float64) string { return FormatSuccess(v) }

func errorsText(l sweep.Level) string {
	if s := l.Errors.String(); s != "" {
		return s
	}
	return "none"
}

func statusText(m map[int]int64) string { return statusCodes(m, "%d: %d", ", ", "-") }

// Headline states what a reader wants first, from the run's levels (result.Run.Levels: a
// sweep's own record, or the steps analyzed under the default objective): a run of one
// level states its QPS, p99 and success rate; more levels state the peak, the knee (and
// the largest level meeting the objective when it lies beyond the peak), why a sweep
// stopped, and how the peak compares with plain net/http.
func Headline(r *result.Run) []string { return headline(r, r.Levels()) }

func headline(r *result.Run, rec *sweep.Record) []string {
	var out []string
	if r.Capacity != nil {
		out = append(out, r.Capacity.Headline())
	}
	if len(rec.Levels) == 1 && r.Sweep == nil {
		l := rec.Levels[0]
		out = append(out, fmt.Sprintf("%.2f requests/sec at %s; p99 %s; success %s%%", l.QPS, l.Label, ms(l.Millis(l.P99)), pct(l.Success)))
		if l.GeneratorLimited() {
			out = append(out, "Generator-limited: "+l.GeneratorLimit.Detail())
		}
	} else if len(rec.Levels) > 0 {
		out = append(out, rec.Headlines()...)
	}
	if r.Sweep != nil && r.Sweep.Stop != nil {
		out = append(out, "Stopped early: "+r.Sweep.Stop.Reason)
	}
	if rec.VsNative == nil && r.Native != nil && len(r.Native.Steps) > 0 {
		nat := r.Native.Levels()
		if c, ok := sweep.Compare(rec.Levels, rec.Peak, nat.Levels, nat.Peak); ok {
			out = append(out, c.String())
		}
	}
	return out
}

// ShellQuote joins a command line so it can be pasted into a POSIX shell.
func ShellQuote(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=.,/:@%+") == "" {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}
