package exposition

import (
	"time"
)

// Exemplar is one observation of a histogram kept with labels that identify it (a trace id)
// and when it was made. OpenMetrics text and the protobuf format carry it with its bucket;
// the 0.0.4 text format has no place for it.
type Exemplar struct {
	Labels []string // name, value pairs
	Value  float64
	Time   time.Time
}

// SetExemplar makes e the exemplar of the bucket its value falls in (replacing the last).
func (h *Histogram) SetExemplar(e Exemplar) {
	if h.exemplars == nil {
		h.exemplars = make([]*Exemplar, len(h.Counts))
	}
	i := 0
	for i < len(h.Bounds) && e.Value > h.Bounds[i] {
		i++
	}
	h.exemplars[i] = &e
}

// appendText writes " # {labels} value timestamp" and the line's end (OpenMetrics).
func (e *Exemplar) appendText(b []byte) []byte {
	b = append(b, " # "...)
	b = appendLabelSet(b, e.Labels, true)
	b = append(b, ' ')
	b = AppendFloat(b, e.Value)
	if !e.Time.IsZero() {
		b = append(b, ' ')
		b = AppendFloat(b, float64(e.Time.UnixNano())/1e9)
	}
	return append(b, '\n')
}

// appendProto encodes e as an io.prometheus.client.Exemplar message.
func (e *Exemplar) appendProto(b []byte) []byte {
	b = appendLabels(b, e.Labels)
	b = appendDouble(b, 2, e.Value)
	if !e.Time.IsZero() {
		var ts []byte
		ts = appendVarint(ts, 1, uint64(e.Time.Unix()))
		ts = appendVarint(ts, 2, uint64(e.Time.Nanosecond()))
		b = appendBytes(b, 3, ts)
	}
	return b
}
