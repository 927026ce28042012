package target

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the server's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestDemoMiddlewares(t *testing.T) {
	var log syncBuffer
	s := start(t, Config{Demo: true, Log: &log})

	code, h, body := get(t, s.URL()+"/api/users/42")
	var u User
	if code != 200 || json.Unmarshal(body, &u) != nil || u.ID != 42 || u.Name != "user-42" {
		t.Fatalf("GET /api/users/42 = %d %q, want 200 and user 42", code, body)
	}
	id1 := h.Get("X-Request-Id")
	_, h2, _ := get(t, s.URL()+"/api/users/43")
	if len(id1) != 32 || id1 == h2.Get("X-Request-Id") {
		t.Errorf("X-Request-Id %q then %q, want two different 32-hex-digit ids", id1, h2.Get("X-Request-Id"))
	}

	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Post(s.URL()+"/api/echo", "application/json", strings.NewReader(`{"name":"x","tags":[1,2]}`))
	if err != nil {
		t.Fatal(err)
	}
	echo, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(echo) != `{"name":"x","tags":[1,2]}` {
		t.Errorf("POST /api/echo = %d %q, want 200 and the body back", resp.StatusCode, echo)
	}

	// recovery turns a panic into a 500.
	if code, _, _ := get(t, s.URL()+"/api/panic"); code != 500 {
		t.Errorf("GET /api/panic with recovery = %d, want 500", code)
	}
	// Bad input is a 400.
	if code, _, _ := get(t, s.URL()+"/api/users/abc"); code != 400 {
		t.Errorf("GET /api/users/abc = %d, want 400", code)
	}

	out := log.String()
	for _, want := range []string{
		"GET /api/users/42 200",              // logger line
		"id=" + id1,                          // logger has the request id
		"POST /api/echo 200",                 // logger line for the echo
		"--- request\nPOST /api/echo",        // dump of the request head
		"\"tags\": [\n    1,\n    2\n  ]",    // dump pretty-prints the request body
		"\"name\": \"user-42\"",              // and the response JSON
		"recovered panic in GET /api/panic:", // recovery logs the panic
	} {
		if !strings.Contains(out, want) {
			t.Errorf("demo log lacks %q; log:\n%s", want, out)
		}
	}
}

func TestDemoNoMiddleware(t *testing.T) {
	var log syncBuffer
	s := start(t, Config{Demo: true, Middleware: []string{"none"}, Log: &log})
	code, h, _ := get(t, s.URL()+"/api/users/1")
	if code != 200 || h.Get("X-Request-Id") != "" {
		t.Errorf("no middleware: GET /api/users/1 = %d with X-Request-Id %q, want 200 and none", code, h.Get("X-Request-Id"))
	}
	// Without recovery a panic drops the connection.
	c := &http.Client{Timeout: 5 * time.Second}
	if resp, err := c.Get(s.URL() + "/api/panic"); err == nil {
		resp.Body.Close()
		t.Errorf("no recovery: GET /api/panic = %d, want a dropped connection", resp.StatusCode)
	}
	if out := log.String(); strings.Contains(out, "GET /api/users/1") {
		t.Errorf("no middleware: log has request lines:\n%s", out)
	}
	// /healthz still exists in demo mode.
	if code, _, body := get(t, s.URL()+"/healthz"); code != 200 || string(body) != `{"status":"ok"}` {
		t.Errorf("demo GET /healthz = %d %q", code, body)
	}
}
