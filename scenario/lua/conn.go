package lua

import (
	"bytes"
	"fmt"
	"strconv"
	"time"
	"unsafe"

	glua "github.com/yuin/gopher-lua"

	"github.com/apiperf/apiperf/scenario"
)

// conn_ is one connection's requester. It owns its request buffer, so the bytes it returns
// stay valid while the connection sends them, whatever the other connections of its thread do.
type conn_ struct {
	t    *thread
	raw  []byte // the current request (batch)
	n    int    // requests in raw
	head bool
	// last is the Lua string raw was copied from: a script that returns the same string
	// again (a request built once in init) costs no copy and no recount.
	last *byte
	lenL int
}

// Request returns the next request: the one built once, or what request() returns now.
func (c *conn_) Request() ([]byte, int, int, bool) {
	t := c.t
	if !t.hasRequest {
		return c.raw, c.n, 0, c.head
	}
	t.mu.Lock()
	if t.L == nil {
		t.mu.Unlock()
		return c.raw, c.n, 0, c.head
	}
	s, err := t.first, error(nil)
	if s != "" {
		t.first = ""
	} else {
		t0 := time.Now()
		s, err = t.callRequest()
		t.busy.Add(int64(time.Since(t0)))
	}
	if err == nil && s == "" {
		err = errEmpty(t.src.name)
	}
	if err != nil {
		ended := t.ended()
		t.mu.Unlock()
		// Keep sending the last good request until the engine stops; the error ends the run
		// unless the call stopped because the run is over.
		if !ended {
			t.src.fail(err)
		}
		if c.raw == nil {
			c.raw, c.n = t.static0(), 1
		}
		return c.raw, c.n, 0, c.head
	}
	if p := unsafe.StringData(s); p != c.last || len(s) != c.lenL {
		c.raw = append(c.raw[:0], s...)
		c.last, c.lenL = p, len(s)
		c.n = countRequests(c.raw)
		c.head = isHead(c.raw)
	}
	t.mu.Unlock()
	return c.raw, c.n, 0, c.head
}

// static0 is a request to fall back on when a script's first request() fails at run time.
func (t *thread) static0() []byte {
	return []byte("GET " + t.src.target.Path + " HTTP/1.1\r\nHost: " + t.src.target.HostHdr + "\r\n\r\n")
}

func errEmpty(name string) error {
	return &scriptError{name + ": request() returned an empty request"}
}

type scriptError struct{ msg string }

func (e *scriptError) Error() string { return e.msg }

// response calls the script's response(status, headers, body) and says whether the
// thread (thread:stop()) or the run (an error) must stop. A stopped thread's script is not
// called again, as wrk's stopped event loop calls nothing.
func (c *conn_) response(status int, header, body []byte) scenario.Stop {
	t, s := c.t, c.t.src
	t.mu.Lock()
	// Under the thread's lock, so that of two responses racing at thread:stop() exactly
	// one is the last the script sees.
	if st := c.stop(); st != scenario.Continue {
		t.mu.Unlock()
		if st == scenario.StopThread {
			st = scenario.Stopped
		}
		return st
	}
	if t.L == nil {
		t.mu.Unlock()
		return scenario.StopRun
	}
	L := t.L
	t0 := time.Now()
	hs := headerTable(L, header)
	err := L.CallByParam(glua.P{Fn: L.GetGlobal("response"), Protect: true},
		glua.LNumber(status), hs, glua.LString(body))
	t.busy.Add(int64(time.Since(t0)))
	ended := t.ended()
	t.mu.Unlock()
	if err != nil && ended {
		return scenario.StopRun
	}
	if err != nil {
		s.fail(&scriptError{"script response: " + luaMessage(s.name, err)})
	}
	return c.stop()
}

// stop is what the script asked for so far: an error stops the run, thread:stop() the thread.
func (c *conn_) stop() scenario.Stop {
	switch {
	case c.t.src.failed.Load():
		return scenario.StopRun
	case c.t.stopped.Load():
		return scenario.StopThread
	}
	return scenario.Continue
}

// delay calls the script's delay() (milliseconds before the next request).
func (c *conn_) delay() time.Duration {
	t, s := c.t, c.t.src
	t.mu.Lock()
	if t.L == nil {
		t.mu.Unlock()
		return 0
	}
	L := t.L
	L.Push(L.GetGlobal("delay"))
	err := L.PCall(0, 1, nil)
	var ms float64
	if err == nil {
		if n, ok := L.Get(-1).(glua.LNumber); ok {
			ms = float64(n)
		}
		L.Pop(1)
	}
	ended := t.ended()
	t.mu.Unlock()
	if err != nil && ended {
		return 0
	}
	if err != nil {
		s.fail(&scriptError{"script delay: " + luaMessage(s.name, err)})
		return 0
	}
	if ms <= 0 {
		return 0
	}
	return time.Duration(ms * float64(time.Millisecond))
}

// The engine captures responses only for a requester that watches them, and sleeps only
// for one that delays: these types add exactly the callbacks the script has.
type (
	connResponse struct{ *conn_ }
	connDelay    struct{ *conn_ }
	connBoth     struct{ *conn_ }
)

// Response passes the response to the script's response().
func (c connResponse) Response(status int, header, body []byte) scenario.Stop {
	return c.response(status, header, body)
}

// Delay is the script's delay().
func (c connDelay) Delay() time.Duration { return c.delay() }

// Response passes the response to the script's response().
func (c connBoth) Response(status int, header, body []byte) scenario.Stop {
	return c.response(status, header, body)
}

// Delay is the script's delay().
func (c connBoth) Delay() time.Duration { return c.delay() }

// headerTable turns a raw response header block into wrk's headers table (name -> value).
func headerTable(L *glua.LState, header []byte) *glua.LTable {
	tb := L.NewTable()
	lines := bytes.Split(header, []byte("\r\n"))
	for _, line := range lines[min(1, len(lines)):] {
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok || len(name) == 0 {
			continue
		}
		tb.RawSetString(string(name), glua.LString(bytes.TrimSpace(value)))
	}
	return tb
}

// isHead reports whether a request batch starts with a HEAD request.
func isHead(raw []byte) bool { return bytes.HasPrefix(raw, []byte("HEAD ")) }

// countRequests counts the HTTP requests in raw (a pipelined batch counts as that many):
// each is a header block ended by an empty line and a body of its Content-Length.
func countRequests(raw []byte) int {
	n := 0
	for len(raw) > 0 {
		end := bytes.Index(raw, []byte("\r\n\r\n"))
		if end < 0 {
			break
		}
		n++
		rest := raw[end+4:]
		if cl := contentLength(raw[:end]); cl > 0 {
			rest = rest[min(cl, len(rest)):]
		}
		raw = rest
	}
	return max(n, 1)
}

// contentLength is the Content-Length in a request's header block, or 0.
func contentLength(head []byte) int {
	for len(head) > 0 {
		line := head
		if i := bytes.Index(head, []byte("\r\n")); i >= 0 {
			line, head = head[:i], head[i+2:]
		} else {
			head = nil
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if ok && bytes.EqualFold(bytes.TrimSpace(name), []byte("Content-Length")) {
			n, err := strconv.Atoi(string(bytes.TrimSpace(value)))
			if err == nil && n > 0 {
				return n
			}
		}
	}
	return 0
}

// readScript reads a script file.
func readScript(path string) (string, error) {
	b, err := scenario.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading script: %w", err)
	}
	return string(b), nil
}
