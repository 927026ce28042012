package load

import (
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
	"github.com/apiperf/apiperf/servertiming"
)

// explainer is what one connection adds to its response samples besides their timing, so a
// slow request can be explained: the connection's number, each request's trace id (when the
// run sends traceparent) and the response's Server-Timing. Every I/O path fills its samples
// through it.
type explainer struct {
	conn int32
	tr   scenario.Tracer // nil: the requests carry no trace context
}

func newExplainer(conn int, r scenario.Requester) explainer {
	tr, _ := r.(scenario.Tracer)
	return explainer{conn: int32(conn), tr: tr}
}

// explain fills in response sample s: request k of the batch, its response's Server-Timing t;
// its trace id and t, when it has any, go in b's Extra for the slot s is added to next.
func (x *explainer) explain(s *measure.Sample, k int, t *measure.Timings, b *sampleBatch) {
	s.Conn = x.conn
	var tr measure.TraceID
	if x.tr != nil {
		tr = measure.TraceID(x.tr.Trace(k))
	}
	b.extras(s, tr, t)
}

// readServerTiming records the metrics of one Server-Timing header value in t, numbering
// their names with metric.
func readServerTiming(t *measure.Timings, metric func([]byte) uint8, v []byte) {
	for {
		m, rest, ok, err := servertiming.Next(v)
		if !ok {
			return
		}
		v = rest
		switch {
		case err != nil:
			t.Bad()
		case m.HasDur:
			t.Add(metric(m.Name), m.Dur)
		}
	}
}
