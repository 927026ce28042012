package profcap

import (
	"errors"
	"io"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// sampleSet is one value per sample name on a metrics page (see parseExposition).
type sampleSet map[string]float64

// parseExposition reads a Prometheus text exposition page with
// prometheus/common's parser and keeps one value per sample name: for a
// counter, gauge or untyped metric the unlabelled sample if there is one,
// else the first; for a summary or histogram its _sum and _count (likewise).
// A malformed page is an error naming its line; a page without samples is an error.
func parseExposition(r io.Reader) (sampleSet, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, err
	}
	out := sampleSet{}
	for name, fam := range families {
		m := pick(fam.GetMetric())
		if m == nil {
			continue
		}
		switch {
		case m.Counter != nil:
			out[name] = m.Counter.GetValue()
		case m.Gauge != nil:
			out[name] = m.Gauge.GetValue()
		case m.Untyped != nil:
			out[name] = m.Untyped.GetValue()
		case m.Summary != nil:
			out[name+"_sum"] = m.Summary.GetSampleSum()
			out[name+"_count"] = float64(m.Summary.GetSampleCount())
		case m.Histogram != nil:
			out[name+"_sum"] = m.Histogram.GetSampleSum()
			out[name+"_count"] = float64(m.Histogram.GetSampleCount())
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no metric samples")
	}
	return out, nil
}

// pick returns the unlabelled metric of a family, else its first, or nil.
func pick(ms []*dto.Metric) *dto.Metric {
	for _, m := range ms {
		if len(m.GetLabel()) == 0 {
			return m
		}
	}
	if len(ms) > 0 {
		return ms[0]
	}
	return nil
}
