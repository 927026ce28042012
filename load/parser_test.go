package load

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apiperf/apiperf/measure"
)

// parseAll feeds resp in pieces of size step and returns the status, how many bytes the
// first response used, and whether it completed.
func parseAll(t *testing.T, resp string, head bool, step int) (status, used int, done bool, err error) {
	t.Helper()
	var p parser
	p.reset(head)
	b := []byte(resp)
	for used < len(b) && !p.done() {
		end := min(used+step, len(b))
		n, ferr := p.feed(b[used:end])
		if ferr != nil {
			return p.status, used + n, false, ferr
		}
		if n < end-used && !p.done() {
			t.Fatalf("feed used %d of %d bytes without finishing the response", n, end-used)
		}
		used += n
	}
	if !p.done() {
		p.eof()
	}
	return p.status, used, p.done(), nil
}

func TestParserResponses(t *testing.T) {
	cases := []struct {
		name   string
		resp   string
		head   bool
		status int
		length int // bytes of the first response (0: all of resp)
		done   bool
		bad    bool
	}{
		{name: "content-length body", resp: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", status: 200, done: true},
		{name: "mixed-case header name", resp: "HTTP/1.1 200 OK\r\ncOnTeNt-LeNgTh: 2\r\n\r\nhi", status: 200, done: true},
		{name: "zero length", resp: "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", status: 404, done: true},
		{name: "chunked with extension and trailer", resp: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\na\r\n0123456789\r\n0\r\nX-T: 1\r\n\r\n", status: 200, done: true},
		{name: "chunked in a list of codings", resp: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n", status: 200, done: true},
		{name: "204 has no body even with a length", resp: "HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n", status: 204, done: true},
		{name: "304 has no body", resp: "HTTP/1.1 304 Not Modified\r\n\r\n", status: 304, done: true},
		{name: "HEAD has no body", resp: "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", head: true, status: 200, done: true},
		{name: "body until close", resp: "HTTP/1.0 200 OK\r\n\r\nstream until eof", status: 200, done: true},
		{name: "100 continue before the response", resp: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 1\r\n\r\nx", status: 201, done: true},
		{name: "bare LF line endings", resp: "HTTP/1.1 200 OK\nContent-Length: 2\n\nok", status: 200, done: true},
		{name: "pipelined: stops at the end of the first", resp: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\naHTTP/1.1 500 E\r\n\r\n", status: 200, length: 39, done: true},
		{name: "truncated body is incomplete", resp: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", status: 200},
		{name: "garbage", resp: "SSH-2.0-OpenSSH\r\n", bad: true},
		{name: "HTTP/2 preface is not HTTP/1", resp: "HTTP/2 200\r\n\r\n", bad: true},
		{name: "two-digit status", resp: "HTTP/1.1 20 OK\r\n\r\n", bad: true},
		{name: "bad content-length", resp: "HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n", bad: true},
		{name: "duplicate content-length", resp: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx", bad: true},
		{name: "bad chunk size", resp: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", bad: true},
	}
	for _, c := range cases {
		for _, step := range []int{1, 3, 7, 1 << 20} { // byte by byte, odd splits, all at once
			status, used, done, err := parseAll(t, c.resp, c.head, step)
			if c.bad {
				if err == nil {
					t.Errorf("%s (step %d): no error, want a protocol error", c.name, step)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s (step %d): error %v", c.name, step, err)
				continue
			}
			want := c.length
			if want == 0 {
				want = len(c.resp)
			}
			if status != c.status || done != c.done || (c.done && used != want) {
				t.Errorf("%s (step %d): status %d done %v used %d, want %d %v %d", c.name, step, status, done, used, c.status, c.done, want)
			}
		}
	}
}

func TestParserConnectionClose(t *testing.T) {
	var p parser
	p.reset(false)
	if _, err := p.feed([]byte("HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 0\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	if !p.done() || !p.close {
		t.Errorf("done=%v close=%v, want both true", p.done(), p.close)
	}
}

// TestParserConnectionEnds: whether the server ends the connection after the response (RFC
// 9112 section 9.3), on the whole-line path and byte by byte.
func TestParserConnectionEnds(t *testing.T) {
	cases := []struct {
		resp  string
		close bool
	}{
		{"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", true},
		{"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nok", false},
		{"HTTP/1.0 200 OK\r\nConnection: keep-alive, close\r\nContent-Length: 2\r\n\r\nok", true},
		{"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false},
		{"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", true},
		{"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", true},
		{"HTTP/1.0 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n", false},
	}
	for _, c := range cases {
		for _, step := range []int{len(c.resp), 1} {
			var p parser
			p.reset(false)
			for b := []byte(c.resp); len(b) > 0 && !p.done(); {
				n, err := p.feed(b[:min(step, len(b))])
				if err != nil {
					t.Fatalf("%q (%d bytes a read): %v", c.resp, step, err)
				}
				b = b[n:]
			}
			if !p.done() || p.close != c.close {
				t.Errorf("%q (%d bytes a read): done %v, close %v; want done, close %v", c.resp, step, p.done(), p.close, c.close)
			}
		}
	}
}

func TestParserLongHeaderLine(t *testing.T) {
	resp := "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("a", maxHeaderLine+1) + "\r\n\r\n"
	if _, _, _, err := parseAll(t, resp, false, 4096); err == nil {
		t.Error("a header line over the limit parsed without error")
	}
}

// names is a Server-Timing name table for parser tests: it numbers names as they come.
type names []string

func (n *names) metric(name []byte) uint8 {
	for i, s := range *n {
		if s == string(name) {
			return uint8(i + 1)
		}
	}
	*n = append(*n, string(name))
	return uint8(len(*n))
}

// timings renders what the parser recorded, e.g. "db=3500 app=1000 bad=1".
func (n names) timings(t measure.Timings) string {
	var parts []string
	for i, m := range t.Metric {
		if m != 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", n[m-1], t.Dur[i]))
		}
	}
	if t.Malformed > 0 || t.Dropped > 0 {
		parts = append(parts, fmt.Sprintf("bad=%d dropped=%d", t.Malformed, t.Dropped))
	}
	return strings.Join(parts, " ")
}

func TestParserServerTiming(t *testing.T) {
	for _, c := range []struct {
		name, resp, want string
	}{
		{"one header", "HTTP/1.1 200 OK\r\nServer-Timing: db;dur=2.5, app;dur=1;desc=\"x, y\"\r\nContent-Length: 2\r\n\r\nok", "db=2500 app=1000"},
		{"several headers, a name twice, any case", "HTTP/1.1 200 OK\r\nServer: nginx\r\nserver-timing: db;dur=2\r\nSERVER-TIMING: db;dur=1.5, cache;desc=hit\r\nContent-Length: 0\r\n\r\n", "db=3500"},
		{"malformed metrics are counted and skipped", "HTTP/1.1 200 OK\r\nServer-Timing: ;dur=1, db;dur=x, ok;dur=3\r\nContent-Length: 0\r\n\r\n", "ok=3000 bad=2 dropped=0"},
		{"no Server-Timing", "HTTP/1.1 200 OK\r\nServer-Timings: db;dur=1\r\nContent-Length: 0\r\n\r\n", ""},
		{"after a 100 Continue", "HTTP/1.1 100 Continue\r\nServer-Timing: early;dur=9\r\n\r\nHTTP/1.1 200 OK\r\nServer-Timing: db;dur=1\r\nContent-Length: 0\r\n\r\n", "db=1000"},
		{"bare LF", "HTTP/1.1 200 OK\nServer-Timing: db;dur=4\nContent-Length: 0\n\n", "db=4000"},
	} {
		for _, step := range []int{1, 3, 7, 1 << 20} {
			var n names
			p := parser{metric: n.metric}
			p.reset(false)
			b := []byte(c.resp)
			for used := 0; used < len(b) && !p.done(); {
				k, err := p.feed(b[used:min(used+step, len(b))])
				if err != nil {
					t.Fatalf("%s (step %d): %v", c.name, step, err)
				}
				used += k
			}
			if got := n.timings(p.timing); !p.done() || got != c.want {
				t.Errorf("%s (step %d): done %v, timings %q; want %q", c.name, step, p.done(), got, c.want)
			}
			p.reset(false)
			if p.timing != (measure.Timings{}) || p.metric == nil {
				t.Errorf("%s: reset kept the timings %+v or lost the metric table", c.name, p.timing)
			}
		}
	}
}

func TestParserServerTimingAllocs(t *testing.T) {
	var n names
	p := parser{metric: n.metric}
	resp := []byte("HTTP/1.1 200 OK\r\nServer-Timing: db;dur=2.5, app;dur=1\r\nContent-Length: 2\r\n\r\nok")
	feed := func() {
		p.reset(false)
		for used := 0; used < len(resp); used += 5 { // split lines: the byte path
			p.feed(resp[used:min(used+5, len(resp))])
		}
	}
	feed()
	if a := testing.AllocsPerRun(100, feed); a != 0 {
		t.Errorf("parsing a response with Server-Timing allocated %v times, want 0", a)
	}
}

// outcome feeds data in pieces of step bytes and says how parsing ended.
func outcome(data []byte, step int) (status int, used int, done bool, failed bool) {
	st, u, d, f, _ := outcomeTimed(data, step)
	return st, u, d, f
}

// outcomeTimed is outcome with the Server-Timing recorded.
func outcomeTimed(data []byte, step int) (status int, used int, done bool, failed bool, timings string) {
	var n names
	p := parser{metric: n.metric}
	p.reset(false)
	defer func() { timings = n.timings(p.timing) + fmt.Sprintf(" sse %v events %d", p.sse, p.events) }()
	for used < len(data) && !p.done() {
		end := min(used+step, len(data))
		k, err := p.feed(data[used:end])
		used += k
		if err != nil {
			return p.status, used, false, true, ""
		}
	}
	return p.status, used, p.done(), false, ""
}

// FuzzParser checks that the whole-line fast path and the byte-at-a-time path agree on
// every input, and that feed always makes progress.
func FuzzParser(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"), 3)
	f.Add([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"), 1)
	f.Add([]byte("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No\r\nConnection: close\r\n\r\n"), 2)
	f.Add([]byte("HTTP/1.1 200 OK\r\nServer-Timing: db;dur=2, a;desc=\"x\"\r\nServer: y\r\nContent-Length: 0\r\n\r\n"), 4)
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Type:  Text/Event-Stream; charset=utf-8\r\nTransfer-Encoding: chunked\r\n\r\n9\r\ndata: a\n\n\r\n3\r\n:\n\n\r\n0\r\n\r\n"), 3)
	f.Fuzz(func(t *testing.T, data []byte, step int) {
		if step <= 0 || step > len(data) {
			step = 1
		}
		s1, u1, d1, f1, t1 := outcomeTimed(data, len(data)+1)
		s2, u2, d2, f2, t2 := outcomeTimed(data, step)
		s3, u3, d3, f3, t3 := outcomeTimed(data, 1)
		if f1 != f3 || (!f1 && (s1 != s3 || u1 != u3 || d1 != d3 || (d1 && t1 != t3))) {
			t.Errorf("whole buffer: status %d used %d done %v failed %v timings %q; byte by byte: %d %d %v %v %q", s1, u1, d1, f1, t1, s3, u3, d3, f3, t3)
		}
		if f2 != f3 || (!f2 && (s2 != s3 || u2 != u3 || d2 != d3 || (d2 && t2 != t3))) {
			t.Errorf("step %d: status %d used %d done %v failed %v timings %q; byte by byte: %d %d %v %v %q", step, s2, u2, d2, f2, t2, s3, u3, d3, f3, t3)
		}
	})
}
