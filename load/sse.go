package load

// Server-sent events (text/event-stream), read the same way on every path: the HTTP/1.1
// parser (parser.go) passes an event-stream response's body bytes to an sseScan, the
// HTTP/2 loop its DATA payloads (h2stream.go).

// eventStreamType is the content type of a stream of server-sent events.
const eventStreamType = "text/event-stream"

// isEventStream reports whether the content type v (a header's value) is text/event-stream,
// parameters aside, ignoring case and leading spaces.
func isEventStream[T string | []byte](v T) bool {
	i := 0
	for i < len(v) && (v[i] == ' ' || v[i] == '\t') {
		i++
	}
	if len(v)-i < len(eventStreamType) {
		return false
	}
	for j := range len(eventStreamType) {
		if lower(v[i+j]) != eventStreamType[j] {
			return false
		}
	}
	return true
}

// sseStatus reports whether a response of status with an event-stream content type is
// measured as a stream: a 2xx (an error page is not a stream, whatever its type).
func sseStatus(status int) bool { return status >= 200 && status < 300 }

// sseScan finds the events of a text/event-stream body as its bytes arrive, in pieces of any
// size: an event is a block of field lines ended by an empty line; comment lines
// (":keep-alive") are not events. CR, LF and CRLF each end a line. Its zero value is at the
// start of a body.
type sseScan struct {
	midLine bool // inside a line (false: at the start of one)
	inEvent bool // a field line of an event not yet dispatched was read
	comment bool // the current line is a comment (":...")
	cr      bool // the last byte was CR (a CRLF ends one line)
}

// events reads p and returns how many events it completed.
func (s *sseScan) events(p []byte) int32 {
	var n int32
	for _, b := range p {
		switch {
		case b == '\n' && s.cr:
			s.cr = false
		case b == '\n' || b == '\r':
			s.cr = b == '\r'
			if !s.midLine && s.inEvent {
				n++
				s.inEvent = false
			}
			s.midLine, s.comment = false, false
		default:
			s.cr = false
			if !s.midLine {
				s.comment = b == ':'
				s.midLine = true
			}
			if !s.comment {
				s.inEvent = true
			}
		}
	}
	return n
}
