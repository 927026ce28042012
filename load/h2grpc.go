package load

import (
	"encoding/binary"

	"golang.org/x/net/http2/hpack"

	"github.com/apiperf/apiperf/measure"
)

// gRPC over the HTTP/2 loop: the request is a POST the source made once (content-type
// application/grpc, te: trailers, a 5-byte-prefixed message); the response's messages are
// counted from its DATA as they arrive, and its grpc-status (from the trailers, or from the
// headers of a trailers-only response) takes the place of the HTTP status.

// h2msgs follows the messages of one response: gRPC's length-prefixed messages, or the
// events of a text/event-stream (h2stream.go).
type h2msgs struct {
	code   int16 // grpc-status + 1; 0: none seen
	count  int32 // messages complete
	bytes  int64 // their payload bytes
	prefix [5]byte
	have   uint8 // bytes of the prefix read
	left   uint32
	inBody bool // reading a message's payload (left bytes to go)
	h2timed
}

// feed reads a DATA payload of the response.
func (m *h2msgs) feed(p []byte) {
	for len(p) > 0 {
		if !m.inBody {
			n := copy(m.prefix[m.have:], p)
			m.have += uint8(n)
			p = p[n:]
			if m.have < 5 {
				return
			}
			m.have = 0
			m.left = binary.BigEndian.Uint32(m.prefix[1:])
			m.bytes += int64(m.left)
			if m.left == 0 {
				m.count++
				continue
			}
			m.inBody = true
		}
		n := uint32(min(uint64(len(p)), uint64(m.left)))
		p = p[n:]
		if m.left -= n; m.left == 0 {
			m.inBody = false
			m.count++
		}
	}
}

// grpcField takes the grpc-status field of a response's headers or trailers; it reports
// whether f was one.
func (c *h2conn) grpcField(s *h2stream, f hpack.HeaderField) bool {
	if f.Name != "grpc-status" {
		return false
	}
	code := 0
	for i := 0; i < len(f.Value) && code <= 99; i++ {
		if d := f.Value[i]; d >= '0' && d <= '9' {
			code = code*10 + int(d-'0')
		} else {
			code = 100
		}
	}
	if code > 99 || f.Value == "" {
		code = 2 // UNKNOWN: not a code a client can read
	}
	s.msgs.code = int16(code) + 1
	return true
}

// grpcEnd turns a complete gRPC response into its result: the grpc-status code as its status
// (an HTTP status other than 200 without a grpc-status stays as it is); a 200 without a
// grpc-status is not a gRPC response (a protocol error). Its messages are counted.
func (c *h2conn) grpcEnd(s *h2stream, now int64) measure.Class {
	switch {
	case s.msgs.code > 0:
		s.status = int(s.msgs.code - 1)
	case s.status == 200:
		return measure.ProtocolError
	}
	if now >= int64(c.e.from) {
		c.grpc.Messages += int64(s.msgs.count)
		c.grpc.MessageBytes += s.msgs.bytes
	}
	return measure.Response
}
