package load

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
	"github.com/apiperf/apiperf/scenario/lua"
)

// runSourceH2 loads src over HTTP/2.
func runSourceH2(t *testing.T, url string, src scenario.Source, cfg Config) (*measure.Step, error) {
	t.Helper()
	tg, err := scenario.ParseTarget(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.HTTP2, cfg.Threads, cfg.Timeout = true, 2, measure.Duration(2*time.Second)
	return Run(context.Background(), cfg, src, tg)
}

// A wrk script's request() string goes out as HEADERS and DATA, and response() sees the
// status, the headers and the body.
func TestH2LuaScript(t *testing.T) {
	var good, bad atomic.Int64
	srv, _ := goH2Server(t, false, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		n := r.Header.Get("X-N")
		if r.Method != "POST" || r.URL.Path != "/item/"+n || string(b) != "body"+n {
			bad.Add(1)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if good.Add(1) == 50 {
			w.Header().Set("X-Stop", "1")
		}
		io.WriteString(w, "ok")
	})
	script := `
counter = 0
seen = 0
request = function()
  counter = counter + 1
  return wrk.format("POST", "/item/" .. counter, {["X-N"] = tostring(counter)}, "body" .. counter)
end
response = function(status, headers, body)
  if status == 200 and body == "ok" and headers["X-Stop"] == "1" then
    wrk.thread:stop()
  end
end
`
	src, err := lua.NewString("h2.lua", script, scenario.Scenario{URL: srv.URL}, lua.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := runSourceH2(t, srv.URL, src, Config{Requests: 10000, Connections: 1, Streams: 4})
	if err != nil {
		t.Fatal(err)
	}
	if bad.Load() != 0 || s.Errors.Total() != 0 {
		t.Errorf("script requests over HTTP/2: the server found %d malformed, errors %v; want none", bad.Load(), s.Errors)
	}
	if s.Requests < 50 || s.Requests > 60 {
		t.Errorf("response() stops the run at the 50th response (x-stop header): %d responses, want 50 to 60", s.Requests)
	}
}

func TestH2LuaRawRequestRefused(t *testing.T) {
	srv, got := goH2Server(t, false, nil)
	script := `request = function() return "hello, not HTTP" end`
	src, err := lua.NewString("raw.lua", script, scenario.Scenario{URL: srv.URL}, lua.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = runSourceH2(t, srv.URL, src, Config{Requests: 10, Connections: 1})
	if err == nil || !strings.Contains(err.Error(), "cannot send this request over HTTP/2") {
		t.Errorf("a raw request() that is not HTTP/1.x: error %v, want it refused with a clear error", err)
	}
	if got.Load() != 0 {
		t.Errorf("the server got %d requests, want none", got.Load())
	}
}

func TestH2Mix(t *testing.T) {
	var a, b atomic.Int64
	srv, _ := goH2Server(t, false, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/a":
			a.Add(1)
		case "/b":
			if r.Method == "PUT" && r.Header.Get("Content-Type") == "application/json" {
				b.Add(1)
			}
		}
	})
	m, err := scenario.DecodeMix("mix.yaml", []byte(`endpoints:
  - path: /a
    weight: 3
  - method: PUT
    path: /b
    weight: 1
    headers: {Content-Type: application/json}
    body: '{"x": 1}'
`))
	if err != nil {
		t.Fatal(err)
	}
	src, err := m.Source(scenario.Scenario{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	s, err := runSourceH2(t, srv.URL, src, Config{Requests: 400, Connections: 2, Streams: 5})
	if err != nil {
		t.Fatal(err)
	}
	if a.Load() != 300 || b.Load() != 100 || s.Requests != 400 || len(s.Endpoints) != 2 {
		t.Errorf("mix 3:1 over HTTP/2: server saw %d of /a and %d of PUT /b, %d responses, %d endpoints; want 300, 100, 400, 2",
			a.Load(), b.Load(), s.Requests, len(s.Endpoints))
	}
}
