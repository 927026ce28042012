package lua

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
)

// received is what a loopback server saw.
type received struct {
	mu     sync.Mutex
	reqs   []seen
	counts map[string]int
}

type seen struct {
	method, path, body string
	header             http.Header
}

func newServer(t *testing.T) (*httptest.Server, *received) {
	t.Helper()
	rec := &received{counts: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, seen{r.Method, r.URL.RequestURI(), string(b), r.Header.Clone()})
		rec.counts[r.URL.Path]++
		rec.mu.Unlock()
		w.Header().Set("X-Served", "yes")
		if r.URL.Path == "/missing" {
			w.WriteHeader(404)
		}
		io.WriteString(w, "hello "+r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	return srv, rec
}

func writeScript(t *testing.T, code string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "script.lua")
	if err := os.WriteFile(p, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func run(t *testing.T, src scenario.Source, url string, cfg load.Config) *measure.Step {
	t.Helper()
	target, err := scenario.ParseTarget(url)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = measure.Duration(2 * time.Second)
	}
	if cfg.Duration == 0 && cfg.Requests == 0 {
		cfg.Duration = measure.Duration(5 * time.Second)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	step, err := load.Run(ctx, cfg, src, target, load.WithExpected(measure.DefaultExpected()))
	if err != nil {
		t.Fatalf("load.Run: %v", err)
	}
	return step
}

// A script that only sets wrk.method/body/headers is built once and sent as is.
func TestStaticScript(t *testing.T) {
	srv, rec := newServer(t)
	p := writeScript(t, `
wrk.method = "POST"
wrk.body   = "{\"a\":1}"
wrk.headers["Content-Type"] = "application/json"
wrk.path = "/static?x=1"
`)
	src, err := New(p, scenario.Scenario{URL: srv.URL + "/ignored", Headers: []scenario.Header{{Name: "X-Cli", Value: "1"}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if !src.Static() {
		t.Fatal("Static() = false for a script without request(), want true")
	}
	step := run(t, src, srv.URL, load.Config{Connections: 2, Threads: 2, Requests: 20})
	if step.Requests != 20 {
		t.Errorf("requests = %d, want 20", step.Requests)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.reqs) != 20 {
		t.Fatalf("server saw %d requests, want 20", len(rec.reqs))
	}
	r := rec.reqs[0]
	want := seen{method: "POST", path: "/static?x=1", body: `{"a":1}`}
	if r.method != want.method || r.path != want.path || r.body != want.body {
		t.Errorf("server saw %s %s %q, want %s %s %q", r.method, r.path, r.body, want.method, want.path, want.body)
	}
	if r.header.Get("Content-Type") != "application/json" || r.header.Get("X-Cli") != "1" {
		t.Errorf("headers %v: want Content-Type from the script and X-Cli from the command line", r.header)
	}
	// wrk sends no User-Agent of its own.
	if ua := r.header.Get("User-Agent"); ua != "" {
		t.Errorf("User-Agent = %q, want none (as wrk)", ua)
	}
}

// The whole API: globals, setup/thread:set/get, init args, request with a per-thread
// counter, response with thread:stop, wrk.format/lookup/connect, and done's report.
func TestFullAPI(t *testing.T) {
	srv, rec := newServer(t)
	p := writeScript(t, `
local threads = {}
local counter = 0

function setup(thread)
  table.insert(threads, thread)
  thread:set("tid", #threads)
  thread:set("conf", { prefix = "/t", tags = { "a", "b" } })
  assert(thread.addr == wrk.host .. ":" .. wrk.port, "addr " .. tostring(thread.addr))
end

function init(args)
  seen_args = args[0] .. "," .. table.concat(args, ",")
  responses = 0
  sent = 0
  assert(wrk.thread ~= nil)
  assert(conf.tags[2] == "b")
end

function request()
  counter = counter + 1
  sent = sent + 1
  local hdrs = { ["X-Thread"] = tostring(tid), ["X-N"] = tostring(counter) }
  return wrk.format("PUT", conf.prefix .. tid .. "/" .. counter, hdrs, "body" .. counter)
end

function response(status, headers, body)
  responses = responses + 1
  last_status = status
  last_served = headers["X-Served"]
  last_body = body
  if responses >= 5 then wrk.thread:stop() end
end

function done(summary, latency, requests)
  local got = 0
  for i, thread in ipairs(threads) do
    got = got + thread:get("responses")
    io.write(string.format("thread %d args=%s status=%s served=%s body=%s\n",
      thread:get("tid"), thread:get("seen_args"), tostring(thread:get("last_status")),
      tostring(thread:get("last_served")), tostring(thread:get("last_body"))))
  end
  print("responses", got, "requests", summary.requests, "errors", summary.errors.connect + summary.errors.read + summary.errors.status)
  print("lookup", wrk.lookup("127.0.0.1", wrk.port)[1], "connect", wrk.connect(threads[1].addr))
  print("latency ok", latency.min <= latency.mean and latency.mean <= latency.max and latency:percentile(50) <= latency.max)
  local n = 0
  for i = 1, #latency do local v, c = latency(i); n = n + c end
  print("latency count", n, "duration>0", summary.duration > 0, "bytes>0", summary.bytes > 0)
end
`)
	var out bytes.Buffer
	src, err := New(p, scenario.Scenario{URL: srv.URL + "/"}, Options{Args: []string{"x", "y"}, Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	// One connection, one thread: it stops after its 5th response; the run goes on to its
	// duration, as wrk's does.
	step := run(t, src, srv.URL+"/", load.Config{Connections: 1, Threads: 1, Duration: measure.Duration(300 * time.Millisecond)})
	if step.Requests != 5 {
		t.Errorf("requests = %d, want 5 (stop after 5 responses)", step.Requests)
	}
	if err := src.Done(&out, step); err != nil {
		t.Fatalf("Done: %v", err)
	}
	rec.mu.Lock()
	for i, r := range rec.reqs {
		wantPath := "/t1/" + itoa(i+1)
		if r.method != "PUT" || r.path != wantPath || r.body != "body"+itoa(i+1) || r.header.Get("X-Thread") != "1" {
			t.Errorf("request %d: %s %s %q X-Thread=%q, want PUT %s %q X-Thread=1", i, r.method, r.path, r.body, r.header.Get("X-Thread"), wantPath, "body"+itoa(i+1))
		}
	}
	rec.mu.Unlock()
	got := out.String()
	for _, want := range []string{
		"thread 1 args=" + srv.URL + "/,x,y status=200 served=yes body=hello /t1/5\n",
		"responses\t5\trequests\t5\terrors\t0\n",
		"lookup\t" + strings.TrimPrefix(srv.URL, "http://") + "\tconnect\ttrue\n",
		"latency ok\ttrue\n",
		"latency count\t5\tduration>0\ttrue\tbytes>0\ttrue\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("done output lacks %q; got:\n%s", want, got)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestDoneSummaryCountsTheWindow checks that done's summary.requests and summary.bytes are the
// numbers the summary prints (responses inside the window), not those drained after it.
func TestDoneSummaryCountsTheWindow(t *testing.T) {
	p := writeScript(t, `
function done(summary, latency, requests)
  print("requests", summary.requests, "bytes", summary.bytes)
end
`)
	var out bytes.Buffer
	src, err := New(p, scenario.Scenario{URL: "http://127.0.0.1:1/"}, Options{Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	step := &measure.Step{Requests: 34635, Bytes: 100000, Drained: measure.Drained{Attempts: 3, Requests: 2, Bytes: 40}}
	if err := src.Done(&out, step); err != nil {
		t.Fatalf("Done: %v", err)
	}
	if got, want := out.String(), "requests\t34633\tbytes\t99960\n"; got != want {
		t.Errorf("done printed %q, want %q (the window's %d responses, as the summary prints)", got, want, step.InWindow())
	}
}
