package target

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// start runs a target for the test and closes it at the end.
func start(t *testing.T, cfg Config) *Server {
	t.Helper()
	s, err := Start(cfg)
	if err != nil {
		t.Fatalf("Start(%+v): %v", cfg, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// get fetches url with a bounded client and returns status, headers and body.
func get(t *testing.T, url string) (int, http.Header, []byte) {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading body: %v", url, err)
	}
	return resp.StatusCode, resp.Header, b
}

func TestHealthz(t *testing.T) {
	s := start(t, Config{})
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
		t.Errorf("URL() = %q, want http://127.0.0.1:PORT", s.URL())
	}
	code, h, body := get(t, s.URL()+"/healthz")
	if code != 200 || string(body) != `{"status":"ok"}` || h.Get("Content-Type") != "application/json" {
		t.Errorf("GET /healthz = %d %q (Content-Type %q), want 200 {\"status\":\"ok\"} application/json",
			code, body, h.Get("Content-Type"))
	}
}

func TestServerDefaults(t *testing.T) {
	s := start(t, Config{Status: 503, Size: 100})
	// Server-wide status and size shape /healthz...
	code, _, body := get(t, s.URL()+"/healthz")
	if code != 503 || string(body) != string(Body(100)) {
		t.Errorf("GET /healthz = %d, %d bytes; want 503 and Body(100)", code, len(body))
	}
	// ...and /knob, whose query overrides them.
	code, _, body = get(t, s.URL()+"/knob/x?status=202")
	if code != 202 || len(body) != 100 {
		t.Errorf("GET /knob?status=202 = %d, %d bytes; want 202 and 100 bytes", code, len(body))
	}
}

func TestKnobResponses(t *testing.T) {
	s := start(t, Config{})
	tests := []struct {
		query  string
		status int
		body   string
		header string // Content-Length wanted, "" to skip
	}{
		// No knobs: the health answer.
		{"", 200, `{"status":"ok"}`, "15"},
		// status sets the code and keeps the body.
		{"status=500", 500, `{"status":"ok"}`, ""},
		// size gives a byte-exact deterministic body with its length.
		{"size=0", 200, "", "0"},
		{"size=1000", 200, string(Body(1000)), "1000"},
		{"size=200000&status=201", 201, string(Body(200000)), "200000"},
		// A status without a body drops it.
		{"status=204&size=10", 204, "", ""},
		// work spins the CPU before the usual answer.
		{"work=1000&size=10", 200, string(Body(10)), "10"},
		// Bad knobs are a 400 naming the knob.
		{"size=-1", 400, "knob size=\"-1\"", ""},
		{"work=-5", 400, "knob work=\"-5\"", ""},
		{"delay=soon", 400, "knob delay=\"soon\"", ""},
		{"colour=red", 400, "knob colour=\"red\": unknown knob", ""},
	}
	for _, tt := range tests {
		code, h, body := get(t, s.URL()+"/knob?"+tt.query)
		if code != tt.status {
			t.Errorf("GET /knob?%s: status %d, want %d", tt.query, code, tt.status)
		}
		if tt.status == 400 {
			if !strings.Contains(string(body), tt.body) {
				t.Errorf("GET /knob?%s: body %q, want it to contain %q", tt.query, body, tt.body)
			}
		} else if string(body) != tt.body {
			t.Errorf("GET /knob?%s: %d-byte body differs from the wanted %d bytes", tt.query, len(body), len(tt.body))
		}
		if tt.header != "" && h.Get("Content-Length") != tt.header {
			t.Errorf("GET /knob?%s: Content-Length %q, want %q", tt.query, h.Get("Content-Length"), tt.header)
		}
	}
}

// raw sends one HTTP/1.1 request on a fresh connection and returns the reader and connection.
func raw(t *testing.T, s *Server, path string) (*bufio.Reader, net.Conn) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, "GET "+path+" HTTP/1.1\r\nHost: test\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	return bufio.NewReader(conn), conn
}

func TestKnobChunked(t *testing.T) {
	s := start(t, Config{})
	r, _ := raw(t, s, "/knob?chunked=1&size=1000")
	headers := map[string]string{}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading headers: %v", err)
		}
		line = strings.TrimSpace(line)
		if line == "" {
			break
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			headers[strings.ToLower(k)] = strings.TrimSpace(v)
		}
	}
	if headers["transfer-encoding"] != "chunked" || headers["content-length"] != "" {
		t.Fatalf("headers %v: want Transfer-Encoding chunked and no Content-Length", headers)
	}
	// Read the chunks by hand: several chunks whose concatenation is Body(1000).
	var body []byte
	chunks := 0
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading chunk size: %v", err)
		}
		n, err := strconv.ParseInt(strings.TrimSpace(line), 16, 64)
		if err != nil {
			t.Fatalf("chunk size line %q: %v", line, err)
		}
		if n == 0 {
			break
		}
		chunks++
		buf := make([]byte, n+2) // data and CRLF
		if _, err := io.ReadFull(r, buf); err != nil {
			t.Fatal(err)
		}
		body = append(body, buf[:n]...)
	}
	if chunks < 2 || string(body) != string(Body(1000)) {
		t.Errorf("chunked body: %d chunks, %d bytes; want several chunks making Body(1000)", chunks, len(body))
	}
}

func TestKnobClose(t *testing.T) {
	s := start(t, Config{})
	r, _ := raw(t, s, "/knob?close=1")
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if !resp.Close || string(body) != `{"status":"ok"}` {
		t.Errorf("close=1: Close=%v body %q, want Connection: close and the health body", resp.Close, body)
	}
	// The server then closes the connection: the next read ends at EOF.
	if n, err := r.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("read after close=1 response = %d, %v; want EOF", n, err)
	}
}

func TestKnobFailures(t *testing.T) {
	s := start(t, Config{})
	c := &http.Client{Timeout: 300 * time.Millisecond}
	// abort: headers arrive, then the body is cut short: a read error.
	resp, err := c.Get(s.URL() + "/knob?abort=1&size=1000")
	if err != nil {
		t.Fatalf("abort=1: GET failed before the headers: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !errors.Is(err, io.ErrUnexpectedEOF) || len(b) != 500 || resp.ContentLength != 1000 {
		t.Errorf("abort=1: read %d of %d bytes, err %v; want 500 of 1000 and unexpected EOF", len(b), resp.ContentLength, err)
	}

	// garbage: not HTTP at all: a protocol error, not a timeout.
	_, err = c.Get(s.URL() + "/knob?garbage=1")
	var ne net.Error
	if err == nil || !strings.Contains(err.Error(), "malformed HTTP") || (errors.As(err, &ne) && ne.Timeout()) {
		t.Errorf("garbage=1: GET error %v, want a malformed HTTP response error", err)
	}

	// hang: no answer, so the client's timeout fires.
	begin := time.Now()
	_, err = c.Get(s.URL() + "/knob?hang=1")
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("hang=1: GET error %v, want a client timeout", err)
	}
	if d := time.Since(begin); d < 300*time.Millisecond {
		t.Errorf("hang=1: GET returned after %v, before the 300ms timeout", d)
	}
}

func TestHangEndsOnClose(t *testing.T) {
	s, err := Start(Config{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		c := &http.Client{Timeout: 20 * time.Second}
		resp, err := c.Get(s.URL() + "/knob?hang=1")
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	begin := time.Now()
	if err := s.Close(); err != nil {
		t.Errorf("Close with a hanging request: %v", err)
	}
	if d := time.Since(begin); d > 10*time.Second { // room for a busy machine; the request hangs for its client's 20s
		t.Errorf("Close took %v with a hanging request, want it prompt", d)
	}
	if err := <-done; err == nil {
		t.Errorf("hanging request got a response when the server closed, want an error")
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v, want nil (idempotent)", err)
	}
}

func TestKnobDelay(t *testing.T) {
	s := start(t, Config{})
	tests := []struct {
		query    string
		min, max time.Duration
	}{
		// A fixed delay holds the response at least that long.
		{"delay=80ms", 80 * time.Millisecond, 2 * time.Second},
		// Jitter adds [0, jitter) on top.
		{"delay=20ms&jitter=50ms", 20 * time.Millisecond, 2 * time.Second},
	}
	for _, tt := range tests {
		begin := time.Now()
		code, _, _ := get(t, s.URL()+"/knob?"+tt.query)
		d := time.Since(begin)
		if code != 200 || d < tt.min || d > tt.max {
			t.Errorf("GET /knob?%s: %d after %v, want 200 within [%v, %v]", tt.query, code, d, tt.min, tt.max)
		}
	}
	// Jitter really varies: 8 answers with jitter=40ms do not all take the same time.
	lo, hi := time.Hour, time.Duration(0)
	for range 8 {
		begin := time.Now()
		get(t, s.URL()+"/knob?jitter=40ms")
		d := time.Since(begin)
		lo, hi = min(lo, d), max(hi, d)
	}
	if hi-lo < 4*time.Millisecond {
		t.Errorf("jitter=40ms: 8 answers took %v..%v, want them spread over the jitter", lo, hi)
	}
	// Server-wide delay applies to /healthz too.
	s2 := start(t, Config{Delay: 60 * time.Millisecond})
	begin := time.Now()
	get(t, s2.URL()+"/healthz")
	if d := time.Since(begin); d < 60*time.Millisecond {
		t.Errorf("server delay 60ms: /healthz answered after %v", d)
	}
}
