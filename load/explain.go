package load

import (
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
	"github.com/apiperf/apiperf/servertiming"
	"github.com/apiperf/apiperf/traceparent"
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

// explain fills in response sample s: request k of the batch, its response's Server-Timing t.
func (x *explainer) explain(s *measure.Sample, k int, t *measure.Timings) {
	s.Conn = x.conn
	s.Timing = *t
	if x.tr != nil {
		s.Trace = measure.TraceID(x.tr.Trace(k))
	}
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

// h2trace is the trace context of one HTTP/2 request: its trace id, and the traceparent
// value to send when apiperf made it (a request's own header is in its block already).
type h2trace struct {
	id    measure.TraceID
	value [55]byte
	add   bool
}

// traceOf is the trace context of request k of the batch just made.
func (c *h2conn) traceOf(k int) h2trace {
	tr := c.w.x.tr
	if tr == nil {
		return h2trace{}
	}
	t := h2trace{id: measure.TraceID(tr.Trace(k))}
	if v := tr.Value(k); len(v) == len(t.value) {
		copy(t.value[:], v)
		t.add = true
	}
	return t
}

// traced returns block with a traceparent field added when tp asks for one: a literal
// without indexing (RFC 7541 6.2.2), so it does not depend on the connection's table.
func (c *h2conn) traced(block []byte, tp *h2trace) []byte {
	if !tp.add {
		return block
	}
	b := append(c.tpBlock[:0], block...)
	b = append(b, 0x00, byte(len(traceparent.Name)))
	b = append(b, traceparent.Name...)
	b = append(b, byte(len(tp.value)))
	b = append(b, tp.value[:]...)
	c.tpBlock = b
	return b
}
