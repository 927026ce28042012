package lua

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
)

// TestWrkExampleScripts runs the behaviour of each of wrk's nine example scripts (scripts/*.lua
// in wg/wrk: addr, auth, counter, delay, pipeline, post, report, setup, stop), written here
// from what they are published to do, with wrk's shape of run (-t2 -c4), and checks that
// apiperf gives wrk's results.
func TestWrkExampleScripts(t *testing.T) {
	type check func(t *testing.T, c *wrkCase)
	cases := []struct {
		name   string
		script string
		method string // what Method reports (the banner)
		// dur is the run's duration, for the cases that check a rate or a window; the
		// others send a count (40: some before the first response, most after), which a
		// busy machine cannot cut short as it can a duration.
		dur time.Duration
		// atLoad checks what setup and init printed before New returned (before wrk's header).
		atLoad string
		check  check
	}{
		{name: "addr: setup gives each thread an address that connects", script: `
local addrs
function setup(thread)
  if not addrs then
    addrs = wrk.lookup(wrk.host, wrk.port or "http")
    for i = #addrs, 1, -1 do
      if not wrk.connect(addrs[i]) then table.remove(addrs, i) end
    end
  end
  thread.addr = addrs[math.random(#addrs)]
end
function init(args) print("thread addr: " .. wrk.thread.addr) end`,
			atLoad: "thread addr: ADDR\nthread addr: ADDR\n",
			check: func(t *testing.T, c *wrkCase) {
				if c.step.Requests == 0 || c.step.Errors.Total() != 0 {
					t.Errorf("%d requests, errors %+v; want requests and no errors", c.step.Requests, c.step.Errors)
				}
			}},
		{name: "auth: a token from a response goes into the next requests", script: `
local token
function request()
  if token then return wrk.format(nil, nil, { ["X-Token"] = token }) end
  return wrk.format()
end
function response(status, headers, body)
  if not token and status == 200 then token = headers["X-Served"] end
end`,
			check: func(t *testing.T, c *wrkCase) {
				with := 0
				for _, r := range c.rec.reqs {
					if r.header.Get("X-Token") == "yes" {
						with++
					}
				}
				if with == 0 || with == len(c.rec.reqs) {
					t.Errorf("%d of %d requests carried the token, want all but the first few", with, len(c.rec.reqs))
				}
			}},
		{name: "counter: request() numbers the paths of each thread", script: `
local counter = 1
function request()
  local path = "/" .. counter
  counter = counter + 1
  return wrk.format(nil, path)
end`,
			check: func(t *testing.T, c *wrkCase) {
				for path, n := range c.rec.counts {
					if n > 2 {
						t.Errorf("path %s requested %d times, want at most once per thread (2)", path, n)
					}
				}
				if len(c.rec.counts) < len(c.rec.reqs)/2 {
					t.Errorf("%d distinct paths for %d requests", len(c.rec.counts), len(c.rec.reqs))
				}
			}},
		{name: "delay: each connection waits 10-50 ms before each request", script: `
function delay() return math.random(10, 50) end`,
			dur: time.Second,
			check: func(t *testing.T, c *wrkCase) {
				// 4 connections, at least 10 ms apart each, for 1s: at most 4 x 101.
				if n := c.step.Requests; n == 0 || n > 4*101 {
					t.Errorf("%d requests, want between 1 and %d", n, 4*101)
				}
			}},
		{name: "pipeline: three requests per batch", script: `
function init(args)
  req = wrk.format(nil, "/?foo") .. wrk.format(nil, "/?bar") .. wrk.format(nil, "/?baz")
end
function request() return req end`,
			dur: time.Second,
			check: func(t *testing.T, c *wrkCase) {
				var foo, bar, baz int
				for _, r := range c.rec.reqs {
					switch r.path {
					case "/?foo":
						foo++
					case "/?bar":
						bar++
					case "/?baz":
						baz++
					}
				}
				if foo == 0 || foo < bar || bar < baz || foo-baz > 4 {
					t.Errorf("server saw foo %d, bar %d, baz %d; want batches of three in order", foo, bar, baz)
				}
				// apiperf's documented choice: one latency sample per response (wrk: per batch).
				if c.step.Requests%3 != 0 || c.step.Latency.Count() != c.step.Requests {
					t.Errorf("%d responses, %d latency samples; want whole batches and one sample per response", c.step.Requests, c.step.Latency.Count())
				}
			}},
		{name: "post: method, body and header from the wrk table", script: `
wrk.method = "POST"
wrk.body   = "foo=bar&baz=quux"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"`,
			method: "POST",
			check: func(t *testing.T, c *wrkCase) {
				if len(c.rec.reqs) != 40 {
					t.Errorf("server saw %d requests, want the 40 sent", len(c.rec.reqs))
				}
				for _, r := range c.rec.reqs {
					if r.method != "POST" || r.body != "foo=bar&baz=quux" || r.header.Get("Content-Type") != "application/x-www-form-urlencoded" {
						t.Fatalf("server saw %s %q Content-Type %q, want the POST of the script", r.method, r.body, r.header.Get("Content-Type"))
					}
				}
			}},
		{name: "report: done prints latency percentiles", script: `
done = function(summary, latency, requests)
  io.write("Percentile\t|\tValue\n")
  for _, p in pairs({ 25, 50, 75, 90, 99, 99.999 }) do
    io.write(string.format("p%g\t\t|\t%d\n", p, latency:percentile(p)))
  end
end`,
			check: func(t *testing.T, c *wrkCase) {
				for _, want := range []string{"Percentile\t|\tValue\n", "\np25\t\t|\t", "\np99.999\t\t|\t"} {
					if !strings.Contains(c.done, want) {
						t.Errorf("done wrote %q, want it to contain %q", c.done, want)
					}
				}
			}},
		{name: "setup: ids from setup, counts back in done", script: `
local counter, threads = 1, {}
function setup(thread)
  thread:set("id", counter)
  table.insert(threads, thread)
  counter = counter + 1
end
function init(args)
  requests, responses = 0, 0
  print(string.format("thread %d created", id))
end
function request() requests = requests + 1; return wrk.request() end
function response(status, headers, body) responses = responses + 1 end
function done(summary, latency, requests)
  for _, thread in ipairs(threads) do
    print(string.format("thread %d made %d requests and got %d responses",
      thread:get("id"), thread:get("requests"), thread:get("responses")))
  end
end`,
			atLoad: "thread 1 created\nthread 2 created\n",
			check: func(t *testing.T, c *wrkCase) {
				for _, id := range []string{"1", "2"} {
					if !strings.Contains(c.done, "thread "+id+" made ") {
						t.Errorf("done wrote %q, want a line for thread %s", c.done, id)
					}
				}
			}},
		{name: "stop: each thread stops itself after 100 responses", script: `
local counter = 1
function response()
  if counter == 100 then wrk.thread:stop() end
  counter = counter + 1
end`,
			dur: 5 * time.Second, // room for 200 requests on a busy machine with -race
			check: func(t *testing.T, c *wrkCase) {
				// wrk: "200 requests in 2.00s": 2 threads x 100, over the run's duration.
				if c.step.Requests != 200 || c.step.InWindow() != 200 {
					t.Errorf("%d requests (%d in the window), want 2 threads x 100", c.step.Requests, c.step.InWindow())
				}
				if c.step.Elapsed.Duration() != 5*time.Second || c.step.QPS() != 200.0/5 {
					t.Errorf("window %v, %v req/s; want the run's 5s and 200/5 req/s, as wrk computes them", c.step.Elapsed.Duration(), c.step.QPS())
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, rec := newServer(t)
			var out bytes.Buffer
			src, err := NewString("example.lua", tc.script, scenario.Scenario{URL: srv.URL + "/"}, Options{Stdout: &out, Threads: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			want := strings.ReplaceAll(tc.atLoad, "ADDR", strings.TrimPrefix(srv.URL, "http://"))
			if got := out.String(); got != want {
				t.Errorf("setup and init printed %q before the run, want %q (every thread is set up before wrk's header)", got, want)
			}
			if m := src.Method(); m != orDefault(tc.method, "GET") {
				t.Errorf("Method() = %q, want %q (the banner says what is sent)", m, orDefault(tc.method, "GET"))
			}
			cfg := load.Config{Threads: 2, Connections: 4, Duration: measure.Duration(tc.dur)}
			if tc.dur == 0 {
				cfg.Requests = 40
			}
			c := &wrkCase{rec: rec}
			c.step = run(t, src, srv.URL+"/", cfg)
			var done bytes.Buffer
			if err := src.Done(&done, c.step); err != nil {
				t.Fatalf("Done: %v", err)
			}
			c.done = done.String()
			rec.mu.Lock()
			defer rec.mu.Unlock()
			tc.check(t, c)
		})
	}
}

type wrkCase struct {
	step *measure.Step
	rec  *received
	done string
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
