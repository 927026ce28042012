package load

import (
	"golang.org/x/net/http2/hpack"
)

// h2timed is how one HTTP/2 response is measured as a stream (stream.go): its messages'
// times and, for server-sent events, the scan of its DATA.
type h2timed struct {
	timed bool // the response is measured as a stream
	sse   bool // its messages are server-sent events (else gRPC messages)
	times streamTimes
	scan  sseScan
}

// streamField notes the response fields that matter to streams: grpc-status of a gRPC
// response (it reports whether f was that), the text/event-stream content type otherwise.
func (c *h2conn) streamField(s *h2stream, f hpack.HeaderField) bool {
	if c.grpc != nil {
		return c.grpcField(s, f)
	}
	if f.Name == "content-type" && sseStatus(s.status) && isEventStream(f.Value) {
		s.msgs.timed, s.msgs.sse = true, true
	}
	return false
}

// streamData reads a DATA payload of a gRPC or event-stream response and times the messages
// it completes.
func (c *h2conn) streamData(s *h2stream, p []byte) {
	m := &s.msgs
	before := m.count
	if m.sse {
		m.count += m.scan.events(p)
	} else {
		m.feed(p)
	}
	if m.timed && m.count != before {
		m.times.arrived(&c.w.samples, before, m.count, c.e.now(), int64(c.e.from))
	}
}
