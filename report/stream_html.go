package report

import (
	"fmt"
	"html/template"
	"sync"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/result"
)

// streamRow is one step's streams in the report: how many, their messages, the time to the
// first message and the gaps between messages.
type streamRow struct {
	Step, Streams, PerStream, Empty        string
	FirstP50, FirstP90, FirstP99, FirstRaw string
	GapP50, GapP90, GapP99                 string
}

var streamsTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("streams").Parse(`<p>{{.What}}: the time to the first {{.Noun}} counts from when the stream was sent{{if .Open}} (open loop: from when it was due, corrected; uncorrected beside it){{end}}; a stream's whole duration is its latency in the level table.</p>
<table class="streams"><thead><tr><th>step</th><th>streams</th><th>{{.Noun}}s per stream</th><th>empty</th><th>first p50</th><th>first p90</th><th>first p99</th>{{if .Open}}<th>first p99 uncorrected</th>{{end}}<th>gap p50</th><th>gap p90</th><th>gap p99</th></tr></thead><tbody>
{{range .Rows}}<tr><td>{{.Step}}</td><td>{{.Streams}}</td><td>{{.PerStream}}</td><td>{{.Empty}}</td><td>{{.FirstP50}}</td><td>{{.FirstP90}}</td><td>{{.FirstP99}}</td>{{if $.Open}}<td>{{.FirstRaw}}</td>{{end}}<td>{{.GapP50}}</td><td>{{.GapP90}}</td><td>{{.GapP99}}</td></tr>
{{end}}</tbody></table>`))
})

// streamSections is the Streams section: a row per step of streamed responses (gRPC server
// streams, server-sent events); none when nothing streamed.
func streamSections(r *result.Run) []Section {
	var rows []streamRow
	var first *measure.Streams
	open := false
	for _, s := range r.Steps {
		st := s.Streams
		if st == nil {
			continue
		}
		if first == nil {
			first = st
		}
		open = open || st.FirstUncorrected != nil
		per := "-"
		if st.Streams > 0 {
			per = fmt.Sprintf("%.1f (%d to %d)", float64(st.Messages)/float64(st.Streams), st.MinMessages, st.MaxMessages)
		}
		rows = append(rows, streamRow{Step: stepName(s), Streams: fmt.Sprint(st.Streams), PerStream: per, Empty: fmt.Sprint(st.Empty),
			FirstP50: streamPct(st.First, 50), FirstP90: streamPct(st.First, 90), FirstP99: streamPct(st.First, 99), FirstRaw: streamPct(st.FirstUncorrected, 99),
			GapP50: streamPct(st.Gap, 50), GapP90: streamPct(st.Gap, 90), GapP99: streamPct(st.Gap, 99)})
	}
	if first == nil {
		return nil
	}
	what := "gRPC server streams"
	if first.Kind == "sse" {
		what = "Server-sent events"
	}
	return []Section{section("Streams", streamsTmpl(), struct {
		What, Noun string
		Open       bool
		Rows       []streamRow
	}{what, first.Noun(), open, rows})}
}

// streamPct is percentile p of h as the tables show durations, "-" when h holds nothing.
func streamPct(h *measure.Histogram, p float64) string {
	if h == nil || h.Count() == 0 {
		return "-"
	}
	return FormatDuration(h.Percentile(p))
}
