package load

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/apiperf/apiperf/measure"
)

// errProtocol marks bytes that are not a valid HTTP/1.x response.
var errProtocol = errors.New("invalid HTTP response")

// errLongLine is the protocol error of a line of a response's head longer than maxHeaderLine.
var errLongLine = fmt.Errorf("%w: a header line longer than %d KiB", errProtocol, maxHeaderLine>>10)

// parser is a streaming HTTP/1.x response parser. It keeps no buffer: it consumes bytes as
// they arrive, remembers only what it needs to find the end of the response (status,
// Content-Length, chunked, whether the server closes the connection after it) and the
// Server-Timing metrics (a header line split across reads is the only thing it copies, into a
// buffer it keeps), and does not allocate in steady state.
type parser struct {
	state    pstate
	pos      int   // position within the current token (status line, header name)
	status   int   // status code
	digits   int   // status digits seen
	cand     uint8 // header names still matching (bit per known header)
	hdr      uint8 // the header whose value is being read
	clen     int64 // Content-Length (-1 when absent)
	remain   int64 // body bytes (or chunk bytes) left
	chunked  bool  // Transfer-Encoding: chunked
	close    bool  // the server closes the connection after this response (see endHeaders)
	http10   bool  // an HTTP/1.0 response
	alive    bool  // Connection: keep-alive (an HTTP/1.0 response's connection stays open)
	match    int   // progress matching "chunked"/"close" in a value
	matchKA  int   // progress matching "keep-alive" in a Connection value
	noBody   bool  // HEAD request: no body whatever the headers say
	lineLen  int   // length of the current header line (0 at a line start)
	sawDigit bool  // a chunk size line had a digit
	untilEOF bool  // body delimited by the connection closing
	// sse: a text/event-stream response (2xx, not to HEAD, from endHeaders on), whose body bytes go to
	// scan, which has found events of it so far; times is the caller's, who has the clock
	// (the parser resets it with the response). sse.go, stream.go
	sse    bool
	events int32
	scan   sseScan
	times  streamTimes
	// metric numbers Server-Timing metric names (the thread's recorder's Metric); nil: the
	// header is not read. timing holds the response's metrics; stBuf collects a
	// Server-Timing value that arrives byte by byte.
	metric func(name []byte) uint8
	timing measure.Timings
	stBuf  []byte
}

type pstate uint8

const (
	sStatus      pstate = iota // "HTTP/1.x " prefix and status code
	sReason                    // reason phrase up to LF
	sLineStart                 // start of a header line (or the blank line)
	sName                      // header name up to ':'
	sValue                     // header value up to LF
	sHeadersLF                 // saw CR of the blank line
	sBody                      // Content-Length body
	sChunkSize                 // chunk size hex digits
	sChunkExt                  // chunk extension up to LF
	sChunkData                 // chunk data
	sChunkCR                   // CRLF after chunk data
	sTrailer                   // trailer line start
	sTrailerLine               // inside a trailer line
	sEOFBody                   // read until the connection closes
	sSkipLine                  // the rest of a header line nobody needs
	sDone
)

// Known headers, one bit each.
const (
	hContentLength = 1 << iota
	hTransferEncoding
	hConnection
	hServerTiming
	hContentType
	hAll = hContentLength | hTransferEncoding | hConnection | hServerTiming | hContentType
)

var hdrNames = [5]string{"content-length", "transfer-encoding", "connection", "server-timing", "content-type"}

// tracked reports whether a header we read can start with the (lower-case) letter c.
func tracked(c byte) bool { return c == 'c' || c == 't' || c == 's' }

const maxHeaderLine = 64 << 10 // longer header lines are a protocol error

// reset prepares for the next response; head says the request was HEAD.
func (p *parser) reset(head bool) {
	*p = parser{clen: -1, noBody: head, metric: p.metric, stBuf: p.stBuf[:0]}
}

// serverTiming records the metrics of one Server-Timing header value.
func (p *parser) serverTiming(v []byte) {
	if p.metric != nil {
		readServerTiming(&p.timing, p.metric, v)
	}
}

// body reads body bytes b (chunk data: without the framing); only an event stream's are
// scanned.
func (p *parser) body(b []byte) {
	if p.sse {
		p.events += p.scan.events(b)
	}
}

// done reports whether a complete response has been parsed.
func (p *parser) done() bool { return p.state == sDone }

// feed consumes bytes of the response and returns how many it used: it stops at the end
// of the response so the rest (a pipelined response) can be fed again after reset.
func (p *parser) feed(b []byte) (int, error) {
	i := 0
	for i < len(b) {
		switch p.state {
		case sBody:
			n := min(int64(len(b)-i), p.remain)
			p.body(b[i : i+int(n)])
			i += int(n)
			p.remain -= n
			if p.remain == 0 {
				p.state = sDone
			}
			continue
		case sChunkData:
			n := min(int64(len(b)-i), p.remain)
			p.body(b[i : i+int(n)])
			i += int(n)
			p.remain -= n
			if p.remain == 0 {
				p.state, p.pos = sChunkCR, 0
			}
			continue
		case sEOFBody:
			p.body(b[i:])
			i = len(b)
			continue
		case sDone:
			return i, nil
		case sSkipLine, sReason:
			// Nothing on the rest of this line matters: jump to its end.
			j := bytes.IndexByte(b[i:], '\n')
			if j < 0 {
				if p.lineLen += len(b) - i; p.lineLen > maxHeaderLine {
					return len(b), errLongLine
				}
				i = len(b)
				continue
			}
			if p.lineLen+j > maxHeaderLine {
				return i + j, errLongLine
			}
			i += j + 1
			p.state, p.lineLen = sLineStart, 0
			continue
		case sLineStart, sStatus:
			// Fast path: a whole line in the buffer is parsed at once; a line split across
			// reads goes through the byte-at-a-time state machine below.
			if p.state == sStatus && p.pos != 0 {
				break
			}
			j := bytes.IndexByte(b[i:], '\n')
			if j < 0 || j > maxHeaderLine {
				break
			}
			var err error
			if p.state == sStatus {
				err = p.statusLine(b[i : i+j])
			} else {
				err = p.headerLine(b[i : i+j])
			}
			if err != nil {
				return i, err
			}
			i += j + 1
			continue
		}
		if err := p.step(b[i]); err != nil {
			return i, err
		}
		i++
	}
	return i, nil
}

// eof tells the parser the connection closed; it reports whether the response is complete.
func (p *parser) eof() bool {
	if p.state == sEOFBody {
		p.state = sDone
	}
	return p.state == sDone
}

// step consumes one byte of the header or chunk framing.
func (p *parser) step(c byte) error {
	switch p.state {
	case sStatus:
		const prefix = "HTTP/1."
		switch {
		case p.pos < len(prefix):
			if c != prefix[p.pos] {
				return errProtocol
			}
		case p.pos == len(prefix): // minor version
			if c < '0' || c > '9' {
				return errProtocol
			}
			p.http10 = c == '0'
		case p.pos == len(prefix)+1:
			if c != ' ' {
				return errProtocol
			}
		default:
			if c >= '0' && c <= '9' && p.digits < 3 {
				p.status = p.status*10 + int(c-'0')
				p.digits++
			} else if p.digits == 3 && (c == ' ' || c == '\r' || c == '\n') {
				if c == '\n' {
					p.state = sLineStart
				} else {
					p.state = sReason
				}
			} else {
				return errProtocol
			}
		}
		p.pos++
	case sLineStart:
		switch c {
		case '\r':
			p.state = sHeadersLF
		case '\n':
			return p.endHeaders()
		case ' ', '\t', ':':
			return errProtocol // obsolete folding or an empty name
		default:
			p.state, p.pos, p.cand, p.lineLen = sName, 0, hAll, 0
			if !tracked(lower(c)) {
				// No header we track starts with this letter. A line still needs a name and a
				// colon, but checking that costs a scan; a malformed line of another header is
				// not ours to judge.
				p.state = sSkipLine
				return nil
			}
			return p.nameByte(c)
		}
	case sName:
		return p.nameByte(c)
	case sValue:
		return p.valueByte(c)
	case sHeadersLF:
		if c != '\n' {
			return errProtocol
		}
		return p.endHeaders()
	case sChunkSize:
		switch {
		case hexVal(c) >= 0:
			if p.remain > (1<<59)>>4 {
				return errProtocol
			}
			p.remain = p.remain<<4 | int64(hexVal(c))
			p.sawDigit = true
		case c == ';' || c == ' ' || c == '\t' || c == '\r':
			if !p.sawDigit {
				return errProtocol
			}
			p.state = sChunkExt
		case c == '\n':
			return p.endChunkSize()
		default:
			return errProtocol
		}
	case sChunkExt:
		if c == '\n' {
			return p.endChunkSize()
		}
	case sChunkCR:
		if c == '\n' {
			p.state, p.remain, p.sawDigit = sChunkSize, 0, false
		} else if c != '\r' {
			return errProtocol
		}
	case sTrailer:
		switch c {
		case '\r':
		case '\n':
			p.state = sDone
		default:
			p.state = sTrailerLine
		}
	case sTrailerLine:
		if c == '\n' {
			p.state = sTrailer
		}
	}
	return nil
}

func (p *parser) endChunkSize() error {
	if !p.sawDigit {
		return errProtocol
	}
	if p.remain == 0 {
		p.state = sTrailer
		return nil
	}
	p.state = sChunkData
	return nil
}

func (p *parser) nameByte(c byte) error {
	if p.lineLen++; p.lineLen > maxHeaderLine {
		return errLongLine
	}
	if c == ':' {
		p.hdr = 0
		p.lineLen = 0
		for i, n := range hdrNames {
			if p.cand&(1<<i) != 0 && p.pos == len(n) {
				p.hdr = 1 << i
			}
		}
		p.state, p.match, p.matchKA = sValue, 0, 0
		if p.hdr == 0 {
			p.state = sSkipLine
		}
		if p.hdr == hContentLength {
			if p.clen >= 0 {
				return errProtocol // a second Content-Length
			}
			p.clen = 0
			p.pos = 0 // digits seen
		}
		return nil
	}
	if c == '\n' {
		p.state = sLineStart // a line without a colon is not a header we track: ignore it
		return nil
	}
	lc := lower(c)
	for i, n := range hdrNames {
		if p.cand&(1<<i) != 0 && (p.pos >= len(n) || n[p.pos] != lc) {
			p.cand &^= 1 << i
		}
	}
	p.pos++
	if p.cand == 0 {
		p.state = sSkipLine
	}
	return nil
}

func (p *parser) valueByte(c byte) error {
	if p.lineLen++; p.lineLen > maxHeaderLine {
		return errLongLine
	}
	if c == '\n' {
		if p.hdr == hContentLength && p.pos == 0 {
			return errProtocol // empty Content-Length
		}
		if p.hdr == hServerTiming {
			p.serverTiming(bytes.TrimSuffix(p.stBuf, []byte("\r")))
			p.stBuf = p.stBuf[:0]
		}
		p.state = sLineStart
		return nil
	}
	switch p.hdr {
	case hContentLength:
		switch {
		case c >= '0' && c <= '9':
			if p.clen > 1<<50 {
				return errProtocol
			}
			p.clen = p.clen*10 + int64(c-'0')
			p.pos++
		case c == ' ' || c == '\t' || c == '\r':
		default:
			return errProtocol
		}
	case hTransferEncoding:
		matchWord(c, "chunked", &p.match, &p.chunked)
	case hConnection:
		matchWord(c, "close", &p.match, &p.close)
		matchWord(c, "keep-alive", &p.matchKA, &p.alive)
	case hServerTiming:
		if p.metric != nil {
			p.stBuf = append(p.stBuf, c)
		}
	case hContentType:
		matchPrefix(c, eventStreamType, &p.match, &p.sse)
	}
	return nil
}

// endHeaders decides, at the blank line, how the body ends, and whether the connection does
// (RFC 9112 section 9.3: Connection: close, or an HTTP/1.0 response without keep-alive).
func (p *parser) endHeaders() error {
	if p.status >= 100 && p.status < 200 && p.status != 101 {
		// An interim response: the real one follows.
		noBody := p.noBody
		p.reset(noBody)
		return nil
	}
	p.close = p.close || (p.http10 && !p.alive)
	p.sse = p.sse && sseStatus(p.status) && !p.noBody // a HEAD response has no body to stream
	switch {
	case p.noBody || p.status == 204 || p.status == 304:
		p.state = sDone
	case p.chunked:
		p.state, p.remain, p.sawDigit = sChunkSize, 0, false
	case p.clen > 0:
		p.state, p.remain = sBody, p.clen
	case p.clen == 0:
		p.state = sDone
	default:
		p.state = sEOFBody
		p.untilEOF = true
	}
	return nil
}
