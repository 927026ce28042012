package load

import (
	"strings"
	"time"

	"golang.org/x/net/http2/hpack"

	"github.com/apiperf/apiperf/measure"
)

// Streams measured as streams on the HTTP/2 loop: a gRPC server stream's messages, or the
// events of a text/event-stream response, each timed as it completes: the first one from the
// stream's send (open loop: from when it was due), the others from the one before (gaps).

// gapBatch is how many gaps a connection collects before handing them to its recorder, and
// gapHold how long it holds the oldest of them (so that the live intervals have them).
const (
	gapBatch = 256
	gapHold  = int64(100 * time.Millisecond)
)

// h2timed is the timing of one stream's messages, and the state of its event parser (SSE).
type h2timed struct {
	timed       bool  // the response is measured as a stream
	sse         bool  // its messages are server-sent events (else gRPC messages)
	first, last int64 // when the first and the latest message completed
	lineStart   bool  // SSE: at the start of a line
	inEvent     bool  // SSE: a field line of an event not yet dispatched was read
	comment     bool  // SSE: the current line is a comment (":...")
	cr          bool  // SSE: the last byte was CR (a CRLF counts once)
}

// streamField notes the response fields that matter to streams: grpc-status of a gRPC
// response (it reports whether f was that), the text/event-stream content type otherwise.
func (c *h2conn) streamField(s *h2stream, f hpack.HeaderField) bool {
	if c.grpc != nil {
		return c.grpcField(s, f)
	}
	if f.Name == "content-type" && s.status >= 200 && strings.HasPrefix(f.Value, "text/event-stream") {
		s.msgs.timed, s.msgs.sse, s.msgs.lineStart = true, true, true
	}
	return false
}

// streamData reads a DATA payload of a gRPC or event-stream response and times the messages
// it completes.
func (c *h2conn) streamData(s *h2stream, p []byte) {
	m := &s.msgs
	before := m.count
	if m.sse {
		m.events(p)
	} else {
		m.feed(p)
	}
	if !m.timed || m.count == before {
		return
	}
	now := c.e.now()
	for n := before; n < m.count; n++ {
		if n == 0 {
			m.first = now
		} else if now >= int64(c.e.from) {
			c.gaps, c.ends = append(c.gaps, now-m.last), append(c.ends, now)
			if len(c.gaps) == gapBatch || now-c.ends[0] >= gapHold {
				c.flushGaps()
			}
		}
		m.last = now
	}
}

// events counts the server-sent events p completes: an event is a block of field lines
// ended by an empty line; comment lines (":keep-alive") are not events. CR, LF and CRLF
// each end a line.
func (m *h2msgs) events(p []byte) {
	for _, b := range p {
		switch {
		case b == '\n' && m.cr:
			m.cr = false
		case b == '\n' || b == '\r':
			m.cr = b == '\r'
			if m.lineStart && m.inEvent {
				m.count++
				m.inEvent = false
			}
			m.lineStart, m.comment = true, false
		default:
			m.cr = false
			if m.lineStart {
				m.comment = b == ':'
				m.lineStart = false
			}
			if !m.comment {
				m.inEvent = true
			}
		}
	}
}

// flushGaps hands the gaps collected to the connection's recorder.
func (c *h2conn) flushGaps() {
	c.w.samples.rec.AddGaps(c.ends, c.gaps)
	c.gaps, c.ends = c.gaps[:0], c.ends[:0]
}

// streamSample adds what a complete stream measured to its response's sample.
func streamSample(smp *measure.Sample, s *h2stream, b *sampleBatch) {
	var first int64
	if s.msgs.count > 0 {
		first = max(s.msgs.first-s.due, 1)
	}
	b.stream(smp, s.msgs.count, first)
}

// streamKind names the streams of a run for its record.
func (e *engine) streamKind() string {
	if e.target.GRPC {
		return "grpc"
	}
	return "sse"
}
