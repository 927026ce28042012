package report

import (
	"bytes"
	"embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"
	"time"

	"github.com/apiperf/apiperf/compare"
	"github.com/apiperf/apiperf/report/chart"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/scenario"
)

//go:embed templates
var templateFS embed.FS

// templates are parsed once; html/template escapes everything that is not typed as safe.
var templates = template.Must(template.New("").ParseFS(templateFS, "templates/*.tmpl"))

func css() template.CSS {
	b, err := templateFS.ReadFile("templates/style.css")
	if err != nil {
		panic(err) // embedded at build time
	}
	return template.CSS(b)
}

// Default objective of the knee when the run does not carry its own.
const (
	DefaultKneeP99     = 500 * time.Millisecond
	DefaultKneeSuccess = 99.9
)

// Section is a titled block of the HTML report, rendered by a later stage (profiles, flame
// graph, target metrics, endpoints). Body must already be safe HTML.
type Section struct {
	Title string
	Body  template.HTML
}

// extraSections is where the parts of the report that come from other packages are
// added: profile top tables and the flame graph and target metrics charts (r.Target), and
// per-endpoint tables (Step.Endpoints). They appear after the level table.
func extraSections(r *result.Run) []Section {
	out := verdictSections(r) // report/verdict.go
	out = append(out, endpointSections(r)...)
	return append(out, targetSections(r)...) // report/endpoints.go, report/target.go
}

type htmlChart struct {
	ID, Title     string
	Src           template.URL
	Width, Height int
}

type htmlLevel struct {
	Label, QPS, Mean, P50, P90, P99, P999, Success, Classic, Errors, Status string
	Reps                                                                    int
	Attempts                                                                int64
}

type htmlReport struct {
	CSS                                template.CSS
	Kind, Name, Method, URL, LevelName string
	Headline                           []string
	Charts                             []htmlChart
	Levels                             []htmlLevel
	Open                               bool
	Sections                           []Section
	Warnings                           []string
	Load, Body, Tool, Host, Time       string
	Headers                            []string
	Command                            string
	Run                                *result.Run // for later template blocks
}

// HTML writes the report of run r as one self-contained page that works offline: headline
// (peak, knee, vs plain net/http), charts embedded as SVG data, a table per level, warnings,
// the spec and the command to reproduce. Everything from the user or the target is escaped.
func HTML(w io.Writer, r *result.Run) error {
	name := r.Name
	if name == "" {
		name = DefaultName(r)
	}
	r.Redact()
	side := compare.FromRun(name, r)
	d := htmlReport{
		CSS: css(), Kind: r.Kind, Name: name, Method: r.Scenario.MethodOrDefault(), URL: r.Scenario.URL,
		LevelName: xLabel(side), Headline: Headline(r, side), Open: side.Rate,
		Sections: extraSections(r), Warnings: r.AllWarnings(),
		Load: r.Load.String(), Tool: r.Tool, Host: r.Host, Command: ShellQuote(r.Command), Run: r,
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
	for _, c := range runCharts(r, side) {
		hc, err := embedChart(c.suffix, c.title, c.chart)
		if err != nil {
			return err
		}
		d.Charts = append(d.Charts, hc)
	}
	for _, l := range side.Levels {
		d.Levels = append(d.Levels, htmlLevelOf(l))
	}
	if err := templates.ExecuteTemplate(w, "report", d); err != nil {
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
	src := "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString(b.Bytes())
	return htmlChart{ID: id, Title: title, Src: template.URL(src), Width: w, Height: h}, nil
}

func htmlLevelOf(l compare.Level) htmlLevel {
	return htmlLevel{
		Label: l.Label, Reps: l.Reps, Attempts: l.Attempts, QPS: fmt.Sprintf("%.2f", l.QPS),
		Mean: ms(l.MeanMS), P50: ms(l.P50MS), P90: ms(l.P90MS), P99: ms(l.P99MS), P999: ms(l.P999MS),
		Success: pct(l.SuccessPct), Classic: pct(l.ClassicPct), Errors: errorsText(l), Status: statusText(l.Status),
	}
}

// ms prints milliseconds in wrk's units, "-" when unknown.
func ms(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return FormatTimeUS(v * 1000)
}

func pct(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.2f", v)
}

func errorsText(l compare.Level) string {
	if s := l.Errors.String(); s != "" {
		return s
	}
	return "none"
}

func statusText(m map[int]int64) string { return statusCodes(m, "%d: %d", ", ", "-") }

// Headline states what a reader wants first: the peak, the knee and how the run compares
// with plain net/http. A sweep's own analysis (r.Sweep: its objective, the median of its
// repetitions, why it stopped) is used when present; otherwise the peak and the knee under
// the default objective are computed from the steps. A run of one level states its QPS,
// p99 and success rate.
func Headline(r *result.Run, side compare.Side) []string {
	if sw := r.Sweep; sw != nil && len(sw.Points) > 0 {
		out := sw.Headlines()
		if sw.Stop != nil {
			out = append(out, "Stopped early: "+sw.Stop.String())
		}
		if sw.VsNative == nil && r.Native != nil && len(r.Native.Steps) > 0 {
			out = append(out, "vs native: "+compare.New(side, compare.FromRun("plain net/http", r.Native)).Headline())
		}
		return out
	}
	var out []string
	at := func(l *compare.Level) string {
		if side.Rate {
			return "rate=" + l.Label + "/s"
		}
		return "c=" + l.Label
	}
	if len(side.Levels) == 1 {
		l := side.Levels[0]
		out = append(out, fmt.Sprintf("%.2f requests/sec at %s; p99 %s; success %s%%", l.QPS, at(&l), ms(l.P99MS), pct(l.SuccessPct)))
	} else if p := side.Peak(); p != nil {
		out = append(out, fmt.Sprintf("Peak: %.2f requests/sec at %s (p99 %s, success %s%%)", p.QPS, at(p), ms(p.P99MS), pct(p.SuccessPct)))
		obj := fmt.Sprintf("p99<=%s, success>=%g%%", DefaultKneeP99, DefaultKneeSuccess)
		if k := Knee(side, DefaultKneeP99, DefaultKneeSuccess); k != nil {
			out = append(out, fmt.Sprintf("Knee: %s, the largest level meeting %s (%.2f requests/sec, p99 %s)", at(k), obj, k.QPS, ms(k.P99MS)))
		} else {
			out = append(out, fmt.Sprintf("Knee: no level met %s", obj))
		}
	}
	if r.Native != nil && len(r.Native.Steps) > 0 {
		d := compare.New(side, compare.FromRun("plain net/http", r.Native))
		out = append(out, "vs native: "+d.Headline())
	}
	return out
}

// Knee is the largest level whose p99 latency is at most p99 and whose success rate is at
// least success percent, or nil when none is.
func Knee(s compare.Side, p99 time.Duration, success float64) *compare.Level {
	var k *compare.Level
	limit := float64(p99) / float64(time.Millisecond)
	for i := range s.Levels {
		l := &s.Levels[i]
		if !math.IsNaN(l.P99MS) && l.P99MS <= limit && l.SuccessPct >= success {
			k = l
		}
	}
	return k
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
