package load

import "bytes"

// The parser's fast path: a status or header line that is whole in the buffer is parsed at
// once (parser.feed); a line split across reads goes through the byte-at-a-time state machine
// (parser.step), to the same result.

// statusLine parses "HTTP/1.x NNN reason" (without the LF).
func (p *parser) statusLine(line []byte) error {
	const prefix = "HTTP/1."
	if len(line) < 12 || string(line[:len(prefix)]) != prefix || line[7] < '0' || line[7] > '9' || line[8] != ' ' {
		return errProtocol
	}
	code := 0
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return errProtocol
		}
		code = code*10 + int(c-'0')
	}
	if len(line) > 12 && line[12] != ' ' && line[12] != '\r' {
		return errProtocol
	}
	p.status, p.digits, p.state, p.http10 = code, 3, sLineStart, line[7] == '0'
	return nil
}

// headerLine parses one whole header line (without the LF), or the blank line.
func (p *parser) headerLine(line []byte) error {
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if len(line) == 0 {
		return p.endHeaders()
	}
	switch line[0] {
	case ' ', '\t', ':', '\r':
		return errProtocol
	}
	if !tracked(lower(line[0])) {
		return nil
	}
	colon := bytes.IndexByte(line, ':')
	if colon < 0 {
		return nil // not a header we track (the byte path ignores it too)
	}
	name, value := line[:colon], line[colon+1:]
	switch {
	case equalFold(name, hdrNames[0]):
		if p.clen >= 0 {
			return errProtocol // a second Content-Length
		}
		var n int64
		digits := 0
		for _, c := range value {
			switch {
			case c >= '0' && c <= '9':
				if n > 1<<50 {
					return errProtocol
				}
				n = n*10 + int64(c-'0')
				digits++
			case c == ' ' || c == '\t' || c == '\r': // as the byte path allows
			default:
				return errProtocol
			}
		}
		if digits == 0 {
			return errProtocol
		}
		p.clen = n
	case equalFold(name, hdrNames[1]):
		if containsFold(value, "chunked") {
			p.chunked = true
		}
	case equalFold(name, hdrNames[2]):
		p.close = p.close || containsFold(value, "close")
		p.alive = p.alive || containsFold(value, "keep-alive")
	case equalFold(name, hdrNames[3]):
		p.serverTiming(value)
	case equalFold(name, hdrNames[4]):
		p.sse = p.sse || isEventStream(value)
	}
	return nil
}
