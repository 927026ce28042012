package traceparent

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in      string
		ok      bool
		sampled bool
	}{
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", true, true},         // the standard's example
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", true, false},        // not sampled
		{" 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 ", true, true},       // surrounding whitespace
		{"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", true, true},   // a later version may add fields
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", false, false}, // version 00 may not
		{"00-00000000000000000000000000000000-00f067aa0ba902b7-01", false, false},       // zero trace id
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", false, false},       // zero parent id
		{"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", false, false},       // upper-case hex
		{"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false, false},       // the forbidden version
		{"00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01", false, false},        // short trace id
		{"", false, false}, // nothing
	} {
		_, _, sampled, ok := Parse([]byte(tc.in))
		if ok != tc.ok || sampled != tc.sampled {
			t.Errorf("Parse(%q) = sampled %v, ok %v; want %v, %v", tc.in, sampled, ok, tc.sampled, tc.ok)
		}
	}
}

// readAll parses the stamped bytes as HTTP/1.1 requests with net/http and returns their
// traceparent headers and bodies.
func readAll(t *testing.T, b []byte) (values, bodies []string) {
	t.Helper()
	br := bufio.NewReader(bytes.NewReader(b))
	for {
		req, err := http.ReadRequest(br)
		if err == io.EOF {
			return values, bodies
		}
		if err != nil {
			t.Fatalf("stamped bytes %q do not parse as requests: %v", b, err)
		}
		body, _ := io.ReadAll(req.Body)
		values = append(values, strings.Join(req.Header.Values("Traceparent"), "|"))
		bodies = append(bodies, string(body))
	}
}

func TestStamp(t *testing.T) {
	get := "GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
	post := "POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"
	chunked := "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
	own := "GET /d HTTP/1.1\r\nHost: x\r\nTraceParent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\n\r\n"
	s := NewStamper()
	seen := map[string]bool{}
	for round := range 3 {
		raw := []byte(get + post + chunked + own)
		out := s.Stamp(raw, 4)
		values, bodies := readAll(t, out)
		if len(values) != 4 || bodies[1] != "hello" || bodies[2] != "abc" {
			t.Fatalf("round %d: stamped batch holds %d requests, bodies %q; want 4 with their bodies", round, len(values), bodies)
		}
		for k, v := range values[:3] {
			tr, _, sampled, ok := Parse([]byte(v))
			if !ok || !sampled || seen[v] {
				t.Fatalf("round %d request %d: traceparent %q: want a new, valid, sampled one", round, k, v)
			}
			seen[v] = true
			if s.Trace(k) != tr {
				t.Errorf("Trace(%d) = %x, want the sent %x", k, s.Trace(k), tr)
			}
		}
		if values[3] != "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" {
			t.Errorf("a request's own traceparent became %q; it must win", values[3])
		}
		if got := s.Trace(3); got.String() != "4bf92f3577b34da6a3ce929d0e0e4736" {
			t.Errorf("Trace(3) = %s, want the request's own id", got)
		}
		if string(raw) != get+post+chunked+own {
			t.Fatal("Stamp changed the caller's bytes")
		}
	}
	// Bytes that are not requests pass through unchanged, with no trace.
	if out := s.Stamp([]byte("garbage"), 1); string(out) != "garbage" || !s.Trace(0).IsZero() {
		t.Errorf("Stamp(garbage) = %q, trace %x; want it unchanged and none", out, s.Trace(0))
	}
}

func TestStampAllocs(t *testing.T) {
	s := NewStamper()
	raw := []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	s.Stamp(raw, 1)
	if n := testing.AllocsPerRun(1000, func() { s.Stamp(raw, 1) }); n != 0 {
		t.Errorf("Stamp allocated %v times per request, want 0", n)
	}
	other := []byte("GET /other HTTP/1.1\r\nHost: x\r\n\r\n")
	if n := testing.AllocsPerRun(1000, func() { s.Stamp(raw, 1); s.Stamp(other, 1) }); n != 0 {
		t.Errorf("Stamp of changing requests allocated %v times, want 0 once its buffers grew", n)
	}
}

func BenchmarkStamp(b *testing.B) {
	s := NewStamper()
	raw := []byte("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: apiperf\r\n\r\n")
	b.ReportAllocs()
	for b.Loop() {
		s.Stamp(raw, 1)
	}
}
