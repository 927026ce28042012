package load

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/apiperf/apiperf/measure"
)

// closingServer answers each connection's first request with resp and closes it, the
// response and the FIN in one segment: the socket is corked while the response is written,
// and the close sends both. (Written and closed in two steps, a busy machine can hold the
// close back for longer than the open loop's 5 ms to the next request, which then goes out
// on a connection the server is closing: a failure of the machine, not of the loop.)
func closingServer(t *testing.T, resp []byte) (string, *atomic.Int64) {
	t.Helper()
	var requests atomic.Int64
	url := serveLoopback(t, func(c net.Conn) {
		buf := make([]byte, 4096)
		if k, err := c.Read(buf); err != nil || k == 0 {
			return
		}
		requests.Add(1) // the engine's requests are small: one read, one request
		rc, err := c.(*net.TCPConn).SyscallConn()
		if err != nil {
			t.Error(err)
			return
		}
		rc.Control(func(fd uintptr) {
			if err := unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_CORK, 1); err != nil {
				t.Error(err)
			}
		})
		c.Write(resp) // serveLoopback closes c on return
	})
	return url, &requests
}

// TestEventLoopServerCloses: a server that answers each request and closes the connection at
// once sends the response and its FIN back to back, which an edge-triggered event loop may
// see in one event; the loop must read on to the end of the stream. A close-delimited
// response completes only there; in the open loop (requests 5 ms apart) a keep-alive
// response followed by a close costs no error, the close being seen on the free connection.
func TestEventLoopServerCloses(t *testing.T) {
	if !evloopSupported {
		t.Skip("no event loops on this system")
	}
	const n = 20
	for _, tc := range []struct {
		name, resp string
		open       bool // the open loop (else the closed loop)
		mode       ioMode
	}{
		{"until-eof/closed", "HTTP/1.1 200 OK\r\n\r\nuntil EOF", false, ioEvloop},
		{"until-eof/open", "HTTP/1.1 200 OK\r\n\r\nuntil EOF", true, ioEvloop},
		{"until-eof/open-netpoll", "HTTP/1.1 200 OK\r\n\r\nuntil EOF", true, ioEvloopNetpoll},
		{"until-eof/open-uring", "HTTP/1.1 200 OK\r\n\r\nuntil EOF", true, ioUring},
		{"conn-close/closed", "HTTP/1.0 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx", false, ioEvloop},
		{"conn-close/open", "HTTP/1.0 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx", true, ioEvloop},
		{"conn-close/open-uring", "HTTP/1.0 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx", true, ioUring},
		{"keep-alive-then-close/open", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", true, ioEvloop},
		{"keep-alive-then-close/open-netpoll", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", true, ioEvloopNetpoll},
		{"keep-alive-then-close/open-uring", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", true, ioUring},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, requests := closingServer(t, []byte(tc.resp))
			cfg := Config{Requests: n, Connections: 2, Threads: 1, Timeout: measure.Duration(5 * time.Second)}
			if tc.open {
				cfg.Rate = 200
			}
			start := time.Now()
			s := run(t, tc.mode, context.Background(), url, cfg)
			if s.Attempts != n || s.Successes != n || s.Errors.Total() != 0 {
				t.Errorf("attempts %d, successes %d, errors %+v; want %d successes and no error", s.Attempts, s.Successes, s.Errors, n)
			}
			if got := requests.Load(); got != n {
				t.Errorf("the server received %d requests, want %d", got, n)
			}
			// 20 requests take well under a second; a response whose end was not seen waits
			// out the 5s timeout (and counts as an error), each of the 10 on a connection
			// would; the rest is room for a busy machine.
			if d := time.Since(start); d > 15*time.Second {
				t.Errorf("the run took %v: a response's end was not seen until the timeout", d)
			}
		})
	}
}
