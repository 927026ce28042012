package traceparent

import "bytes"

// Stamper writes a fresh traceparent header into each raw HTTP/1.1 request of a connection
// (each request of a pipelined batch gets its own), into a buffer it reuses: no allocation
// in steady state. A request that already carries a traceparent (a script's own) keeps it.
// It is not safe for concurrent use: one per connection (or per stream writer).
type Stamper struct {
	gen    *Gen
	buf    []byte
	last   []byte // the raw batch buf was laid out for
	slots  []int  // per request of the batch: where its value starts in buf, -1: its own header
	traces []TraceID
}

// NewStamper returns a stamper with its own generator.
func NewStamper() *Stamper { return &Stamper{gen: NewGen()} }

// Stamp returns raw (n requests) with a new traceparent in each request, in a buffer that
// stays valid until the next call. Bytes it cannot frame as requests are returned as they are.
func (s *Stamper) Stamp(raw []byte, n int) []byte {
	if !bytes.Equal(raw, s.last) || len(s.slots) == 0 && len(raw) > 0 {
		if !s.layout(raw, n) {
			s.traces = s.traces[:0]
			return raw
		}
	}
	for i, at := range s.slots {
		if at < 0 {
			continue
		}
		t, p := s.gen.Next()
		putValue(s.buf[at:at+valueLen], t, p)
		s.traces[i] = t
	}
	return s.buf
}

// Value is the traceparent value Stamp wrote into request k of the last batch; nil when it
// wrote none (the request carried its own, or could not be framed).
func (s *Stamper) Value(k int) []byte {
	if k >= len(s.slots) || k >= len(s.traces) || s.slots[k] < 0 {
		return nil
	}
	return s.buf[s.slots[k] : s.slots[k]+valueLen]
}

// Trace is the trace id of request k of the last batch stamped (a request's own when it
// carried one); zero when there was none.
func (s *Stamper) Trace(k int) TraceID {
	if k < len(s.traces) {
		return s.traces[k]
	}
	return TraceID{}
}

var (
	crlf      = []byte("\r\n")
	headerEnd = []byte("\r\n\r\n")
	prefix    = []byte("\r\n" + Name + ": ")
	lastChunk = []byte("\r\n0\r\n\r\n")
)

// containsFold reports whether word (lower case) occurs in b, ignoring ASCII case.
func containsFold(b []byte, word string) bool {
	for i := 0; i+len(word) <= len(b); i++ {
		if bytes.EqualFold(b[i:i+len(word)], []byte(word)) {
			return true
		}
	}
	return false
}

// layout copies raw into buf with a header line after each request line and notes where
// the values go; false when raw does not frame as n requests.
func (s *Stamper) layout(raw []byte, n int) bool {
	s.buf, s.slots, s.traces = s.buf[:0], s.slots[:0], s.traces[:0]
	s.last = append(s.last[:0], raw...)
	rest := raw
	for k := 0; k < n || len(rest) > 0; k++ {
		line := bytes.Index(rest, crlf)
		end := bytes.Index(rest, headerEnd)
		if line < 0 || end < 0 {
			s.last = s.last[:0]
			return false
		}
		head := rest[line : end+2] // the header lines, each starting with CRLF
		size, ok := requestSize(rest, end+4, head)
		if !ok {
			s.last = s.last[:0]
			return false
		}
		var own TraceID
		if v := headerValue(head); v != nil {
			own, _, _, _ = Parse(v)
			s.buf = append(s.buf, rest[:size]...)
			s.slots = append(s.slots, -1)
		} else {
			s.buf = append(s.buf, rest[:line]...)
			s.buf = append(s.buf, prefix...)
			s.slots = append(s.slots, len(s.buf))
			s.buf = append(s.buf, make([]byte, valueLen)...)
			s.buf = append(s.buf, rest[line:size]...)
		}
		s.traces = append(s.traces, own)
		rest = rest[size:]
	}
	return true
}

// headerValue returns the value of a traceparent header among the header lines (each
// starting with CRLF), nil when there is none.
func headerValue(head []byte) []byte {
	for len(head) > 2 {
		head = head[2:]
		lineEnd := bytes.Index(head, crlf)
		if lineEnd < 0 {
			lineEnd = len(head)
		}
		line := head[:lineEnd]
		if len(line) > len(Name) && line[len(Name)] == ':' && bytes.EqualFold(line[:len(Name)], []byte(Name)) {
			return line[len(Name)+1:]
		}
		head = head[lineEnd:]
	}
	return nil
}

// requestSize is the length of the request that starts raw, its header block ending at
// bodyAt: the body is Content-Length bytes, or chunks up to the last one.
func requestSize(raw []byte, bodyAt int, head []byte) (int, bool) {
	clen, chunked := -1, false
	for h := head; len(h) > 2; {
		h = h[2:]
		e := bytes.Index(h, crlf)
		if e < 0 {
			e = len(h)
		}
		line := h[:e]
		h = h[e:]
		name, value, found := bytes.Cut(line, []byte(":"))
		if !found {
			continue
		}
		switch {
		case bytes.EqualFold(bytes.TrimSpace(name), []byte("content-length")):
			clen = 0
			for _, c := range bytes.TrimSpace(value) {
				if c < '0' || c > '9' || clen > 1<<40 {
					return 0, false
				}
				clen = clen*10 + int(c-'0')
			}
		case bytes.EqualFold(bytes.TrimSpace(name), []byte("transfer-encoding")):
			chunked = containsFold(value, "chunked")
		}
	}
	switch {
	case chunked:
		if bytes.HasPrefix(raw[bodyAt:], lastChunk[2:]) {
			return bodyAt + len(lastChunk) - 2, true
		}
		end := bytes.Index(raw[bodyAt:], lastChunk)
		if end < 0 {
			return 0, false
		}
		return bodyAt + end + len(lastChunk), true
	case clen > 0:
		if bodyAt+clen > len(raw) {
			return 0, false
		}
		return bodyAt + clen, true
	}
	return bodyAt, true
}
