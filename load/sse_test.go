package load

import (
	"fmt"
	"testing"
)

func TestSSEScanCounts(t *testing.T) {
	for _, c := range []struct {
		name string
		in   string
		want int32
	}{
		{"LF events", "data: a\n\ndata: b\nid: 2\n\n", 2},
		{"CRLF and CR line ends", "data: a\r\n\r\ndata: b\r\rdata: c\r\n", 2},
		{"comments are not events", ": keep-alive\n\n:\n\ndata: x\n\n", 1},
		{"blank lines between events are not events", "\n\n\ndata: x\n\n\n\n", 1},
		{"an event not yet ended is not counted", "data: a\n", 0},
		{"a field without a value is an event", "data\n\n", 1},
		{"a comment inside an event does not end it", "data: a\n: c\ndata: b\n\n", 1},
	} {
		var s sseScan
		if n := s.events([]byte(c.in)); n != c.want {
			t.Errorf("%s: events(%q) = %d, want %d", c.name, c.in, n, c.want)
		}
	}
}

// FuzzSSEScanSplit: however a body's bytes are split into reads (or DATA frames), the events
// counted are the same as from the bytes in one piece.
func FuzzSSEScanSplit(f *testing.F) {
	f.Add([]byte("data: a\r\n\r\n: c\n\ndata: b\n\n"), uint8(3))
	f.Add([]byte("data: a\r\r\ndata: b\r\n\r\n"), uint8(1))
	f.Fuzz(func(t *testing.T, b []byte, step uint8) {
		var whole, split sseScan
		all := whole.events(b)
		n := int(step%16) + 1
		var got int32
		for _, p := range pieces(b, n) {
			got += split.events(p)
		}
		if got != all {
			t.Errorf("%q in pieces of %d: %d events; in one piece %d", b, n, got, all)
		}
	})
}

func TestIsEventStream(t *testing.T) {
	for _, c := range []struct {
		v    string
		want bool
	}{
		{"text/event-stream", true},                // as servers send it
		{"text/event-stream; charset=utf-8", true}, // parameters aside
		{" Text/Event-Stream", true},               // case and leading space do not matter
		{"text/event", false},                      // too short
		{"application/json", false},                // another type
		{"x text/event-stream", false},             // not at the start
	} {
		if got := isEventStream(c.v); got != c.want {
			t.Errorf("isEventStream(%q) = %v, want %v", c.v, got, c.want)
		}
		if got := isEventStream([]byte(c.v)); got != c.want {
			t.Errorf("isEventStream([]byte(%q)) = %v, want %v", c.v, got, c.want)
		}
	}
}

// TestParserEventStream: the HTTP/1.1 parser finds an event stream by its head (on the
// whole-line path and byte by byte) and scans only its body, chunk framing left out.
func TestParserEventStream(t *testing.T) {
	const head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
	for _, c := range []struct {
		name   string
		resp   string
		head   bool
		sse    bool
		events int32
	}{
		{"chunked, an event split across chunks", head + "Transfer-Encoding: chunked\r\n\r\n6\r\ndata: \r\n4\r\na\n\n:\r\n9\r\n ping\n\nx\n\r\n2\r\n\r\n\r\n0\r\n\r\n", false, true, 2},
		{"Content-Length", head + "Content-Length: 16\r\n\r\ndata: a\n\nid: 1\r\r", false, true, 2},
		{"close-delimited", head + "\r\ndata: a\r\n\r\ndata: b\r\n\r\n", false, true, 2},
		{"a parameter, case and spaces", "HTTP/1.1 200 OK\r\ncontent-TYPE:   TEXT/event-stream;charset=utf-8\r\nContent-Length: 9\r\n\r\ndata: a\n\n", false, true, 1},
		{"an error page is not a stream", "HTTP/1.1 503 No\r\nContent-Type: text/event-stream\r\nContent-Length: 9\r\n\r\ndata: a\n\n", false, false, 0},
		{"another type is not a stream", "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 9\r\n\r\ndata: a\n\n", false, false, 0},
		{"the type in another header is not a stream", "HTTP/1.1 200 OK\r\nX-Type: text/event-stream\r\nContent-Length: 9\r\n\r\ndata: a\n\n", false, false, 0},
		{"a response to HEAD has no body to stream", head + "Content-Length: 9\r\n\r\n", true, false, 0},
		{"an interim response's type does not count", "HTTP/1.1 103 Early\r\nContent-Type: text/event-stream\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\ndata: a\n\n", false, false, 0},
	} {
		for _, step := range []int{1, 2, 7, len(c.resp)} {
			var p parser
			p.reset(c.head)
			for used := 0; used < len(c.resp) && !p.done(); {
				n, err := p.feed([]byte(c.resp[used:min(used+step, len(c.resp))]))
				if err != nil {
					t.Fatalf("%s, in pieces of %d: feed: %v", c.name, step, err)
				}
				used += n
			}
			if p.sse != c.sse || p.events != c.events {
				t.Errorf("%s, in pieces of %d: sse %v, %d events; want %v, %d", c.name, step, p.sse, p.events, c.sse, c.events)
			}
		}
	}
}

// BenchmarkParseEventStream parses a chunked event stream of 20 events, its body scanned
// for them (BenchmarkParseChunked is the same framing without the scan).
func BenchmarkParseEventStream(b *testing.B) {
	body := sseEvents(20)
	resp := []byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(body), body))
	var p parser
	b.ReportAllocs()
	b.SetBytes(int64(len(resp)))
	for b.Loop() {
		p.reset(false)
		if _, err := p.feed(resp); err != nil || !p.done() || p.events != 20 {
			b.Fatalf("feed: %v done=%v events=%d", err, p.done(), p.events)
		}
	}
}
