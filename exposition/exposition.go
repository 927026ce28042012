// Package exposition writes metrics in the Prometheus exposition formats, the page a
// Prometheus server scrapes: the text format (version 0.0.4) by default, OpenMetrics text
// (with histogram exemplars) and the delimited protobuf format when the scraper asks for them
// (Prometheus asks for protobuf when native histograms are on): families with help and type, labelled samples, classic and native histograms,
// summaries, and the Go runtime and process metrics a Go service exposes. It is small on purpose: apiperf's /metrics pages are a few dozen series, and a
// full client library would be initialized (and paid for in memory) by every apiperf process.
package exposition

import (
	"math"
	"net/http"
	"strconv"
	"strings"
)

// ContentType is the media type of the text format served by Handler.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// OpenMetricsType is the media type of OpenMetrics text, served by Handler when asked for.
const OpenMetricsType = "application/openmetrics-text; version=1.0.0; charset=utf-8"

// Page is a metrics page being written. Families must be written whole, one after another;
// a name must not be written twice.
type Page struct {
	b     []byte
	proto bool         // the protobuf format
	om    bool         // OpenMetrics text
	eof   bool         // OpenMetrics: the page is closed with "# EOF"
	fam   *protoFamily // protobuf: the family being written
}

// NewOpenMetricsPage returns a page in OpenMetrics text (OpenMetricsType).
func NewOpenMetricsPage() *Page { return &Page{om: true} }

// NewProtoPage returns a page in the delimited protobuf format (ProtoContentType); the zero
// Page is in the text format.
func NewProtoPage() *Page { return &Page{proto: true} }

// Bytes returns the page; an OpenMetrics page is closed by it and takes no more families.
func (p *Page) Bytes() []byte {
	p.flush()
	if p.om && !p.eof {
		p.b, p.eof = append(p.b, "# EOF\n"...), true
	}
	return p.b
}

// flush encodes the protobuf family being written.
func (p *Page) flush() {
	if p.fam != nil {
		p.b = p.fam.appendTo(p.b)
		p.fam = nil
	}
}

// Family starts a metric family: its HELP and TYPE lines. typ is counter, gauge, histogram,
// summary or untyped.
func (p *Page) Family(name, help, typ string) {
	if p.proto {
		p.flush()
		p.fam = &protoFamily{name: name, help: help, typ: typ}
		return
	}
	if p.om {
		// OpenMetrics names a counter family without its samples' _total suffix.
		if typ == "counter" {
			name = strings.TrimSuffix(name, "_total")
		} else if typ == "untyped" {
			typ = "unknown"
		}
	}
	p.b = append(p.b, "# HELP "...)
	p.b = append(p.b, name...)
	p.b = append(p.b, ' ')
	p.b = appendEscaped(p.b, help, false)
	p.b = append(p.b, "\n# TYPE "...)
	p.b = append(p.b, name...)
	p.b = append(p.b, ' ')
	p.b = append(p.b, typ...)
	p.b = append(p.b, '\n')
}

// Sample writes one sample line, name{label="value",...} v; labels are name, value pairs.
func (p *Page) Sample(name string, v float64, labels ...string) {
	if p.proto {
		if p.fam != nil {
			p.fam.sample(name, v, labels)
		}
		return
	}
	p.b = append(p.b, name...)
	p.b = appendLabelSet(p.b, labels, false)
	p.b = append(p.b, ' ')
	p.b = AppendFloat(p.b, v)
	p.b = append(p.b, '\n')
}

// appendLabelSet writes {name="value",...}; nothing for no labels unless always.
func appendLabelSet(b []byte, labels []string, always bool) []byte {
	if len(labels) == 0 && !always {
		return b
	}
	b = append(b, '{')
	for i := 0; i+1 < len(labels); i += 2 {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, labels[i]...)
		b = append(b, `="`...)
		b = appendEscaped(b, labels[i+1], true)
		b = append(b, '"')
	}
	return append(b, '}')
}

// Metric writes a family of one sample: a counter or gauge without labels.
func (p *Page) Metric(name, help, typ string, v float64) {
	p.Family(name, help, typ)
	p.Sample(name, v)
}

// Histogram writes a classic histogram family: cumulative counts per upper bound (bounds
// ascending, without +Inf; counts has one more entry, the +Inf bucket, equal to the count),
// then _sum and _count. In the protobuf format a histogram made by NewNativeHistogram also
// carries its native buckets.
func (p *Page) Histogram(name, help string, h *Histogram) {
	p.Family(name, help, "histogram")
	if p.proto {
		p.fam.histogram(h)
		return
	}
	var cum uint64
	for i, n := range h.Counts {
		cum += n
		le := "+Inf"
		if i < len(h.Bounds) {
			le = string(AppendFloat(nil, h.Bounds[i]))
		}
		p.Sample(name+"_bucket", float64(cum), "le", le)
		if p.om && i < len(h.exemplars) && h.exemplars[i] != nil {
			p.b = h.exemplars[i].appendText(p.b[:len(p.b)-1])
		}
	}
	p.Sample(name+"_sum", h.Sum)
	p.Sample(name+"_count", float64(cum))
}

// Histogram is a classic Prometheus histogram: counts per bucket (not cumulative), the last
// one for values above every bound.
type Histogram struct {
	Bounds    []float64
	Counts    []uint64
	Sum       float64
	native    *native     // nil: classic buckets only
	exemplars []*Exemplar // by bucket; nil: none
}

// NewHistogram returns an empty histogram with these upper bounds (ascending).
func NewHistogram(bounds []float64) *Histogram {
	return &Histogram{Bounds: bounds, Counts: make([]uint64, len(bounds)+1)}
}

// ObserveN adds n observations of v.
func (h *Histogram) ObserveN(v float64, n uint64) {
	i := 0
	for i < len(h.Bounds) && v > h.Bounds[i] {
		i++
	}
	h.Counts[i] += n
	h.Sum += v * float64(n)
	if h.native != nil {
		h.native.observe(v, n)
	}
}

// AppendFloat appends v as the text format writes numbers: the shortest decimal form,
// +Inf, -Inf or NaN.
func AppendFloat(b []byte, v float64) []byte {
	switch {
	case math.IsInf(v, 1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	case math.IsNaN(v):
		return append(b, "NaN"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// appendEscaped escapes a backslash and a newline (HELP text), and a double quote in a label
// value.
func appendEscaped(b []byte, s string, quote bool) []byte {
	if !strings.ContainsAny(s, "\\\n\"") {
		return append(b, s...)
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b = append(b, `\\`...)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '"' && quote:
			b = append(b, `\"`...)
		default:
			b = append(b, c)
		}
	}
	return b
}

// Handler serves the page that write fills on each request: in the protobuf format when the
// request's Accept header asks for it, else in the text format.
func Handler(write func(*Page)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, typ := &Page{}, ContentType
		switch accept := r.Header.Get("Accept"); {
		case acceptsProto(accept):
			p, typ = NewProtoPage(), ProtoContentType
		case strings.Contains(accept, "application/openmetrics-text"):
			p, typ = NewOpenMetricsPage(), OpenMetricsType
		}
		write(p)
		b := p.Bytes()
		w.Header().Set("Content-Type", typ)
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		if r.Method != http.MethodHead {
			_, _ = w.Write(b)
		}
	})
}

func parseFloat(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.NaN()
	}
	return v
}
