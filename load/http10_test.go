package load

import (
	"bufio"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
)

// The end of a connection an HTTP/1.0 response implies (RFC 9112 section 9.3): a response
// without Connection: keep-alive (or any with Connection: close) ends it, and the next
// request goes on a new connection, as wrk does; it is not an error.

func TestHTTP10CloseClosed(t *testing.T) {
	eachIO(t, func(t *testing.T, mode ioMode) { testHTTP10Close(t, mode, false) })
}

func TestHTTP10CloseOpen(t *testing.T) {
	openIO(t, func(t *testing.T, mode ioMode) { testHTTP10Close(t, mode, true) })
}

// testHTTP10Close loads a server that writes one response per connection and closes it a
// little later, as a server that ends the exchange by closing does when the close lags: a
// request written on the connection after the response is never answered. Every attempt must
// succeed, each on a connection of its own, none sent after a response that ended it.
func testHTTP10Close(t *testing.T, mode ioMode, open bool) {
	for _, resp := range []string{
		"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok",
		"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok",
	} {
		url, conns, late := lateCloser(t, resp)
		cfg := Config{Requests: 60, Connections: 3, Threads: 1, Timeout: measure.Duration(5 * time.Second)}
		if open {
			cfg.Rate = 300
		}
		s := run(t, mode, context.Background(), url, cfg)
		if s.Successes != 60 || s.Errors.Total() != 0 {
			t.Errorf("%q: successes %d, errors %+v; want 60 successes and no error", resp[:15], s.Successes, s.Errors)
		}
		if n := late.Load(); n != 0 {
			t.Errorf("%q: %d requests were written on a connection after the response that ended it", resp[:15], n)
		}
		if n := conns.Load(); n != 60 {
			t.Errorf("%q: the server accepted %d connections, want one per request (60)", resp[:15], n)
		}
	}
}

// lateCloser serves resp to the first request of each connection and closes it 30 ms later;
// it counts the connections and the requests that arrived on them after the response.
func lateCloser(t *testing.T, resp string) (url string, conns, late *atomic.Int64) {
	t.Helper()
	conns, late = new(atomic.Int64), new(atomic.Int64)
	url = serveLoopback(t, func(c net.Conn) {
		conns.Add(1)
		r := bufio.NewReader(c)
		if _, err := readRequest(r); err != nil {
			return
		}
		if _, err := c.Write([]byte(resp)); err != nil {
			return
		}
		c.SetReadDeadline(time.Now().Add(30 * time.Millisecond))
		if _, err := readRequest(r); err == nil {
			late.Add(1)
		}
	})
	return url, conns, late
}

// readRequest reads a request's head (the engine's GETs have no body).
func readRequest(r *bufio.Reader) (string, error) {
	var head strings.Builder
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return head.String(), err
		}
		head.WriteString(line)
		if line == "\r\n" || line == "\n" {
			return head.String(), nil
		}
	}
}

// TestPythonHTTPServer loads Python's http.server, a real HTTP/1.0 server (it answers
// "HTTP/1.0 200 OK" with a Content-Length and closes the connection), on every I/O path,
// closed and open loop: every attempt succeeds. Before, a request written on the closing
// connection failed half of the attempts as read errors.
func TestPythonHTTPServer(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed (.ci/run installs it)")
	}
	url := pythonServer(t, py)
	for _, open := range []bool{false, true} {
		test := func(t *testing.T, mode ioMode) {
			cfg := Config{Requests: 200, Connections: 4, Threads: 2, Timeout: measure.Duration(5 * time.Second)}
			if open {
				cfg.Rate = 400
			}
			s := run(t, mode, context.Background(), url, cfg)
			if s.Successes != 200 || s.Errors.Total() != 0 || s.Status[200] != 200 || s.SuccessRate() != 100 {
				t.Errorf("successes %d, statuses %v, errors %+v; want 200 responses 200 and no error", s.Successes, s.Status, s.Errors)
			}
		}
		if open {
			t.Run("open", func(t *testing.T) { openIO(t, test) })
		} else {
			t.Run("closed", func(t *testing.T) { eachIO(t, test) })
		}
	}
}

// pythonServer starts python3 -m http.server's handler on a free loopback port, serving a
// small file, and returns the file's URL; the server ends with the test.
func pythonServer(t *testing.T, py string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ok.txt"), []byte("ok\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const script = `import functools, http.server, sys
h = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
h.func.log_message = lambda *a: None
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), h)
print(s.server_address[1], flush=True)
s.serve_forever()
`
	out := startChild(t, exec.Command(py, "-c", script, dir))
	port, err := out.ReadString('\n')
	if err != nil {
		t.Fatalf("python3 http.server did not say its port: %v", err)
	}
	return "http://127.0.0.1:" + strings.TrimSpace(port) + "/ok.txt"
}

// startChild starts cmd, its standard error on the test's, and returns its standard output;
// it is killed when the test ends.
func startChild(t *testing.T, cmd *exec.Cmd) *bufio.Reader {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return bufio.NewReader(out)
}
