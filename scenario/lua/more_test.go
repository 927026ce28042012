package lua

import (
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/scenario"
)

// A request() returning three concatenated requests is one batch counted as three.
func TestPipelining(t *testing.T) {
	srv, rec := newServer(t)
	p := writeScript(t, `
init = function(args)
  local r = {}
  r[1] = wrk.format(nil, "/p1")
  r[2] = wrk.format("POST", "/p2", nil, "xyz")
  r[3] = wrk.format(nil, "/p3")
  req = table.concat(r)
end
request = function() return req end
`)
	src, err := New(p, scenario.Scenario{URL: srv.URL}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	step := run(t, src, srv.URL, load.Config{Connections: 2, Threads: 1, Requests: 30})
	if step.Requests != 30 {
		t.Errorf("requests = %d, want 30 (10 batches of 3)", step.Requests)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, path := range []string{"/p1", "/p2", "/p3"} {
		if rec.counts[path] != 10 {
			t.Errorf("server saw %s %d times, want 10 (counts %v)", path, rec.counts[path], rec.counts)
		}
	}
	for _, r := range rec.reqs {
		if r.path == "/p2" && (r.method != "POST" || r.body != "xyz") {
			t.Errorf("/p2 arrived as %s with body %q, want POST xyz", r.method, r.body)
		}
	}
}

// Each thread keeps its own state: a global counter counts per thread, and every
// connection of a thread shares it.
func TestCountsPerThread(t *testing.T) {
	srv, rec := newServer(t)
	p := writeScript(t, `
local n = 0
function setup(thread) thread:set("name", "th" .. thread.id) end
function request()
  n = n + 1
  return wrk.format(nil, "/" .. name .. "/" .. n)
end
`)
	src, err := New(p, scenario.Scenario{URL: srv.URL}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	// 4 connections over 2 threads, 40 requests: each thread sends 20 and its counter
	// reaches exactly 20 with no number used twice.
	step := run(t, src, srv.URL, load.Config{Connections: 4, Threads: 2, Requests: 40})
	if step.Requests != 40 {
		t.Fatalf("requests = %d, want 40", step.Requests)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, th := range []string{"th0", "th1"} {
		for i := 1; i <= 20; i++ {
			path := "/" + th + "/" + itoa(i)
			if rec.counts[path] != 1 {
				t.Errorf("server saw %s %d times, want once", path, rec.counts[path])
			}
		}
	}
}

// delay() in milliseconds spaces the requests out.
func TestDelay(t *testing.T) {
	srv, _ := newServer(t)
	p := writeScript(t, `function delay() return 20 end`)
	src, err := New(p, scenario.Scenario{URL: srv.URL}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	start := time.Now()
	step := run(t, src, srv.URL, load.Config{Connections: 1, Threads: 1, Requests: 5})
	if el := time.Since(start); el < 100*time.Millisecond {
		t.Errorf("5 requests with delay() = 20 ms took %v, want at least 100ms", el)
	}
	if step.Requests != 5 {
		t.Errorf("requests = %d, want 5", step.Requests)
	}
}

// wrk.format's quirks: Host is wrk.host without the port when the table has none, and
// Content-Length is set in (or, without a body, cleared from) the table it is given.
func TestFormatQuirks(t *testing.T) {
	var out strings.Builder
	p := writeScript(t, `
function done()
  local h = { ["Content-Length"] = "99" }
  local plain = wrk.format("GET", "/a", h)
  print(plain == "GET /a HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", h["Content-Length"] == nil, h["Host"])
  local h2 = {}
  wrk.format("POST", "/b", h2, "12345")
  print(h2["Content-Length"])
  print(wrk.headers["Host"], wrk.scheme, wrk.host, wrk.port, wrk.method, wrk.path)
end
`)
	src, err := New(p, scenario.Scenario{URL: "http://127.0.0.1:9/x?y=1"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if err := src.Done(&out, nil); err != nil {
		t.Fatal(err)
	}
	want := "true\ttrue\t127.0.0.1\n5\nnil\thttp\t127.0.0.1\t9\tGET\t/x?y=1\n"
	if out.String() != want {
		t.Errorf("done printed %q, want %q", out.String(), want)
	}
}

// A script that does not load, or whose init/request fails, is an error naming the file
// and line, before any traffic.
func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct {
		name, code, want string
	}{
		// A syntax error names the line.
		{"syntax", "x = = 1", "line:1"},
		// A runtime error at the top level names file and line.
		{"toplevel", "\n\nerror('boom')", "script.lua:3: boom"},
		// init's error is reported before any request.
		{"init", "function init(args)\n  local x = nil + 1\nend", "script.lua:2:"},
		// request() must return a string.
		{"request type", "function request() return 42 end", "request() returned number"},
		// setup errors too.
		{"setup", "function setup(t) t.addr = '10.0.0.1:80' end", "apiperf sends every thread to the target"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeScript(t, tc.code)
			_, err := New(p, scenario.Scenario{URL: "http://127.0.0.1:9/"}, Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New(%q) error = %v, want one containing %q", tc.code, err, tc.want)
			}
		})
	}
}

// A request() that fails during the run stops it at the next response and the error is
// returned by Done.
func TestRuntimeError(t *testing.T) {
	srv, _ := newServer(t)
	p := writeScript(t, `
local n = 0
function request()
  n = n + 1
  if n > 3 then error("too many") end
  return wrk.format()
end
function response() end
`)
	src, err := New(p, scenario.Scenario{URL: srv.URL}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	step := run(t, src, srv.URL, load.Config{Connections: 1, Threads: 1, Duration: 5e9})
	if step.Requests > 10 {
		t.Errorf("requests = %d, want the run stopped right after the error", step.Requests)
	}
	if err := src.Done(nil, step); err == nil || !strings.Contains(err.Error(), "script.lua:5: too many") {
		t.Errorf("Done error = %v, want the request() error with its line", err)
	}
}

func TestCountRequests(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want int
	}{
		// One request without a body.
		{"GET / HTTP/1.1\r\nHost: a\r\n\r\n", 1},
		// A body that looks like a request is skipped by its Content-Length.
		{"POST / HTTP/1.1\r\ncontent-length: 27\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", 1},
		// Three pipelined requests.
		{strings.Repeat("GET / HTTP/1.1\r\n\r\n", 3), 3},
		// Garbage without an empty line still counts as one request (the server decides).
		{"hello", 1},
	} {
		if got := countRequests([]byte(tc.raw)); got != tc.want {
			t.Errorf("countRequests(%q) = %d, want %d", tc.raw, got, tc.want)
		}
	}
}
