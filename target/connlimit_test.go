package target

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"
)

// TestMaxConns: with MaxConns 2, two kept-alive connections are served, a third is reset
// before it gets a response, and once one of the two closes a new one is served again.
func TestMaxConns(t *testing.T) {
	s := start(t, Config{MaxConns: 2})
	addr := s.Addr().String()
	dial := func() net.Conn {
		t.Helper()
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatalf("dial %s: %v", addr, err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		t.Cleanup(func() { c.Close() })
		return c
	}
	// roundTrip sends one GET /healthz on c and returns its status, or the error.
	roundTrip := func(c net.Conn, br *bufio.Reader) (int, error) {
		if _, err := c.Write([]byte("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")); err != nil {
			return 0, err
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	var kept []net.Conn
	for i := range 2 {
		c := dial()
		if code, err := roundTrip(c, bufio.NewReader(c)); err != nil || code != 200 {
			t.Fatalf("connection %d of 2 (within the limit): GET /healthz = %d, %v; want 200", i+1, code, err)
		}
		kept = append(kept, c)
	}
	// The reset may arrive while the connection is still being set up (the dial fails) or on
	// the request.
	if third, err := net.DialTimeout("tcp", addr, 5*time.Second); err == nil {
		defer third.Close()
		third.SetDeadline(time.Now().Add(10 * time.Second))
		if code, err := roundTrip(third, bufio.NewReader(third)); err == nil {
			t.Fatalf("connection 3 over a limit of 2: GET /healthz = %d, want a reset", code)
		}
	} else if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("connection 3 over a limit of 2: dial failed with %v, want a reset", err)
	}
	kept[0].Close()
	// The slot comes back when the server sees the close: retry briefly.
	deadline := time.Now().Add(5 * time.Second)
	for {
		// Until the server has seen the close, a new connection may be reset even while it
		// is being set up: that is a failed try too.
		code := 0
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err == nil {
			c.SetDeadline(time.Now().Add(10 * time.Second))
			code, err = roundTrip(c, bufio.NewReader(c))
			c.Close()
		}
		if err == nil && code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after closing one of 2 connections, a new one still fails: %d, %v", code, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
