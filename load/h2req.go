package load

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/traceparent"
	"golang.org/x/net/http2/hpack"
)

// h2req is one request translated to HTTP/2: its header block and its body.
type h2req struct {
	block []byte // HPACK header block, encoded without the dynamic table (valid on any connection)
	body  []byte
	head  bool
}

// h2translator turns the raw HTTP/1.1 requests a scenario makes (static, mix or a Lua
// script's request()) into HTTP/2 header blocks and bodies. The last translation is kept:
// a static request is translated once per connection slot.
type h2translator struct {
	scheme    string
	authority string // when the request has no Host header
	enc       *hpack.Encoder
	buf       bytes.Buffer
	last      []byte
	reqs      []h2req
}

func newH2Translator(scheme, authority string) *h2translator {
	t := &h2translator{scheme: scheme, authority: authority}
	t.enc = hpack.NewEncoder(&t.buf)
	// Never insert into the dynamic table, so a header block does not depend on the
	// connection it was first sent on (retries go to a new one). The table size update this
	// emits once is dropped: the server's table is left as it is, just never referenced.
	t.enc.SetMaxDynamicTableSizeLimit(0)
	_ = t.enc.WriteField(hpack.HeaderField{Name: ":method", Value: "GET"})
	t.buf.Reset()
	return t
}

// hopHeaders are HTTP/1.1 connection-specific headers HTTP/2 forbids (RFC 9113 8.2.2).
var hopHeaders = map[string]bool{
	"connection": true, "keep-alive": true, "proxy-connection": true,
	"transfer-encoding": true, "upgrade": true, "host": true,
}

// translate returns the HTTP/2 form of a raw batch of HTTP/1.1 requests. The result is
// shared until the next call with different bytes; callers must not change it.
func (t *h2translator) translate(raw []byte) ([]h2req, error) {
	if len(t.reqs) > 0 && bytes.Equal(raw, t.last) {
		return t.reqs, nil
	}
	var reqs []h2req
	rest := raw
	for len(rest) > 0 {
		r, n, err := t.one(rest)
		if err != nil {
			return nil, fmt.Errorf("cannot send this request over HTTP/2: %w", err)
		}
		reqs = append(reqs, r)
		rest = rest[n:]
	}
	if len(reqs) == 0 {
		return nil, errors.New("cannot send this request over HTTP/2: the request is empty")
	}
	t.last = append(t.last[:0], raw...)
	t.reqs = reqs
	return reqs, nil
}

// one translates the first request of raw and returns how many bytes it took.
func (t *h2translator) one(raw []byte) (h2req, int, error) {
	end := bytes.Index(raw, []byte("\r\n\r\n"))
	sep := 4
	if end < 0 {
		if end = bytes.Index(raw, []byte("\n\n")); end < 0 {
			return h2req{}, 0, errors.New("no blank line ends its header block")
		}
		sep = 2
	}
	lines := strings.Split(strings.ReplaceAll(string(raw[:end]), "\r\n", "\n"), "\n")
	method, target, proto, ok := requestLine(lines[0])
	if !ok {
		return h2req{}, 0, fmt.Errorf("request line %q is not METHOD TARGET HTTP/1.x", clip(lines[0]))
	}
	if proto != "HTTP/1.1" && proto != "HTTP/1.0" {
		return h2req{}, 0, fmt.Errorf("request line %q: protocol %s is not HTTP/1.x", clip(lines[0]), proto)
	}
	if method == "CONNECT" {
		return h2req{}, 0, errors.New("CONNECT requests are not supported over HTTP/2")
	}
	authority, path := t.authority, target
	if strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://") {
		// absolute-form: the authority is in the target
		rest := target[strings.Index(target, "//")+2:]
		authority, path = rest, "/"
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			authority, path = rest[:i], rest[i:]
		}
	} else if target != "*" && !strings.HasPrefix(target, "/") {
		return h2req{}, 0, fmt.Errorf("request target %q is not a path", clip(target))
	}
	type field struct{ name, value string }
	var fields []field
	clen, chunked := -1, false
	for _, line := range lines[1:] {
		name, value, ok := strings.Cut(line, ":")
		if !ok || name == "" || strings.TrimSpace(name) != name {
			return h2req{}, 0, fmt.Errorf("header line %q is not Name: value", clip(line))
		}
		name, value = strings.ToLower(name), strings.TrimSpace(value)
		switch name {
		case "host":
			authority = value
		case "content-length":
			n, err := strconv.Atoi(value)
			if err != nil || n < 0 {
				return h2req{}, 0, fmt.Errorf("Content-Length %q is not a length", clip(value))
			}
			clen = n
		case "transfer-encoding":
			if !strings.EqualFold(value, "chunked") {
				return h2req{}, 0, fmt.Errorf("Transfer-Encoding %q (only chunked can be translated)", clip(value))
			}
			chunked = true
		case "upgrade":
			return h2req{}, 0, errors.New("an Upgrade request cannot be sent over HTTP/2")
		case "te":
			if !strings.EqualFold(value, "trailers") {
				continue // the only TE HTTP/2 allows
			}
		}
		if !hopHeaders[name] {
			fields = append(fields, field{name, value})
		}
	}
	n := end + sep
	var body []byte
	switch {
	case chunked:
		size, ok := chunkedLen(raw[n:])
		if !ok {
			return h2req{}, 0, errors.New("its chunked body is incomplete")
		}
		body = dechunk(raw[n : n+size])
		n += size
		fields = append(fields, field{"content-length", strconv.Itoa(len(body))})
	case clen > 0:
		if len(raw)-n < clen {
			return h2req{}, 0, fmt.Errorf("its body is %d bytes, shorter than its Content-Length %d", len(raw)-n, clen)
		}
		body = append([]byte(nil), raw[n:n+clen]...)
		n += clen
	}
	t.buf.Reset()
	for _, f := range [...]field{{":method", method}, {":scheme", t.scheme}, {":authority", authority}, {":path", path}} {
		_ = t.enc.WriteField(hpack.HeaderField{Name: f.name, Value: f.value})
	}
	for _, f := range fields {
		_ = t.enc.WriteField(hpack.HeaderField{Name: f.name, Value: f.value})
	}
	block := append([]byte(nil), t.buf.Bytes()...)
	return h2req{block: block, body: body, head: method == "HEAD"}, n, nil
}

// requestLine splits "GET /path HTTP/1.1".
func requestLine(s string) (method, target, proto string, ok bool) {
	method, rest, ok1 := strings.Cut(s, " ")
	target, proto, ok2 := strings.Cut(rest, " ")
	return method, target, proto, ok1 && ok2 && method != "" && target != ""
}

// chunkedLen returns the length of the chunked body at the start of b, through its last chunk
// and trailers.
func chunkedLen(b []byte) (int, bool) {
	var p parser
	p.reset(false)
	p.state, p.chunked = sChunkSize, true
	n, err := p.feed(b)
	if err != nil || !p.done() {
		return 0, false
	}
	return n, true
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
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
