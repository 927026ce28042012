package scenario

import "github.com/apiperf/apiperf/traceparent"

// Tracer is implemented by the requesters of a Traced source: the trace id of request k of
// the batch Request returned last (zero: none).
type Tracer interface {
	Trace(k int) traceparent.TraceID
	// Value is the traceparent value added to request k (nil: it carried its own).
	Value(k int) []byte
	// Unstamped is the batch Request returned last as the source made it, before its
	// traceparent headers were added (for HTTP/2, which sends them in its own header block).
	Unstamped() []byte
}

// Traced wraps src so that every request carries a W3C traceparent header with new random
// ids (a request that carries its own keeps it): each connection's requester stamps its
// requests into a buffer of its own, without allocating per request.
func Traced(src Source) Source { return tracedSource{src} }

type tracedSource struct{ Source }

// Requester returns the connection's requester, stamping, with the same optional
// behaviour (a script's response() and delay()) as src's.
func (t tracedSource) Requester(thread, conn int) (Requester, error) {
	r, err := t.Source.Requester(thread, conn)
	if err != nil {
		return nil, err
	}
	c := &tracedConn{r: r, st: traceparent.NewStamper()}
	watch, wok := r.(ResponseWatcher)
	delay, dok := r.(Delayer)
	switch {
	case wok && dok:
		return struct {
			*tracedConn
			ResponseWatcher
			Delayer
		}{c, watch, delay}, nil
	case wok:
		return struct {
			*tracedConn
			ResponseWatcher
		}{c, watch}, nil
	case dok:
		return struct {
			*tracedConn
			Delayer
		}{c, delay}, nil
	}
	return c, nil
}

// tracedConn is one connection's stamping requester.
type tracedConn struct {
	r    Requester
	st   *traceparent.Stamper
	last []byte
}

// Request returns the inner requester's next batch with a traceparent in each request.
func (c *tracedConn) Request() ([]byte, int, int, bool) {
	raw, n, ep, head := c.r.Request()
	c.last = raw
	return c.st.Stamp(raw, n), n, ep, head
}

// Trace is the trace id of request k of the last batch.
func (c *tracedConn) Trace(k int) traceparent.TraceID { return c.st.Trace(k) }

// Value is the traceparent value added to request k of the last batch.
func (c *tracedConn) Value(k int) []byte { return c.st.Value(k) }

// Unstamped is the last batch as the inner requester made it.
func (c *tracedConn) Unstamped() []byte { return c.last }
