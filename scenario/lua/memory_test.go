package lua

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
)

// TestScriptMemoryBounded: a script that allocates without bound, at its top level or in
// request(), or asks string.rep for a terabyte, stops with an error naming the memory
// limit, and the heap comes back.
func TestScriptMemoryBounded(t *testing.T) {
	const limit = 64 << 20
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	sc := scenario.Scenario{URL: srv.URL + "/"}
	for _, tc := range []struct{ name, code, want string }{
		{"top level", `local t = {} while true do t[#t+1] = string.rep("x", 1000000) .. #t end`, "over the memory limit of 64 MiB"},
		{"string.rep", `local s = string.rep("x", 1e12)`, "string.rep: 1000000000000 bytes asked for, over the memory limit of 64 MiB"},
	} {
		begin := time.Now()
		// The memory limit ends it; the load budget is only a bound, wide for a busy machine
		// (growing to 256 MiB took 15-19s at load 11-20 with -race; 64 MiB, a quarter).
		_, err := NewString(tc.name+".lua", tc.code, sc, Options{MaxMemory: limit, LoadBudget: time.Minute})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: NewString = %v, want %q", tc.name, err, tc.want)
		}
		t.Logf("%s: %v after %v", tc.name, err, time.Since(begin).Round(time.Millisecond))
		// The limit is on the process's heap objects, garbage not yet swept included: collect
		// this case's 64 MiB, or on a busy machine the next script can start over the limit.
		runtime.GC()
	}
	code := `local t = {}
request = function()
  if #t > 0 or wrk.thread == nil then
    for i = 1, 20 do t[#t+1] = string.rep("y", 1000000) .. #t end
  end
  t[#t+1] = "z"
  return wrk.format()
end`
	src, err := NewString("grow.lua", code, sc, Options{MaxMemory: limit, LoadBudget: time.Minute})
	if err != nil {
		t.Fatalf("NewString: %v", err)
	}
	target, _ := scenario.ParseTarget(sc.URL)
	// A run of a minute that the script's memory ends after a few requests: on a busy
	// machine the growth takes longer than on an idle one (seconds at load 20), never half
	// the run.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	begin := time.Now()
	step, runErr := load.Run(ctx, load.Config{Connections: 1, Threads: 1, Duration: measure.Duration(time.Minute), Timeout: measure.Duration(time.Second)}, src, target)
	took := time.Since(begin)
	err = src.Err()
	src.Close()
	if err == nil || !strings.Contains(err.Error(), "over the memory limit of 64 MiB") || ctx.Err() != nil {
		t.Errorf("a request() growing a table: run error %v, script error %v; want the memory limit named before the run's end", runErr, err)
	}
	// The run stops with the script, not at the end of its minute, and says why.
	var warnings []string
	if step != nil {
		warnings = step.Warnings
	}
	if took > 30*time.Second || !strings.Contains(strings.Join(warnings, "\n"), "stopped early: script grow.lua: the heap grew to") {
		t.Errorf("a request() over the memory limit: the run took %v (of 1m), warnings %q; want it stopped early, saying why", took, warnings)
	}
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	if m.HeapAlloc > limit {
		t.Errorf("heap %d MiB after the script was closed", m.HeapAlloc>>20)
	}
}

// TestScriptRequestErrorStopsRun: a request() that raises an error stops the run early, in
// the closed and the open loop (before, the last good request was sent until the end of the
// duration), and the step says why.
func TestScriptRequestErrorStopsRun(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	sc := scenario.Scenario{URL: srv.URL + "/"}
	target, _ := scenario.ParseTarget(sc.URL)
	code := `local n = 0
request = function()
  n = n + 1
  if n > 50 then error("boom after 50") end
  return wrk.format()
end`
	for _, rate := range []float64{0, 500} {
		src, err := NewString("boom.lua", code, sc, Options{})
		if err != nil {
			t.Fatalf("NewString: %v", err)
		}
		begin := time.Now()
		// 50 requests end the run long before its 20s, even on a busy machine.
		step, err := load.Run(context.Background(), load.Config{Connections: 2, Threads: 1, Rate: rate, Duration: measure.Duration(20 * time.Second), Timeout: measure.Duration(time.Second)}, src, target)
		took := time.Since(begin)
		serr := src.Err()
		src.Close()
		if err != nil {
			t.Fatalf("rate %v: %v", rate, err)
		}
		if serr == nil || !strings.Contains(serr.Error(), "boom after 50") {
			t.Errorf("rate %v: script error %v, want the request() error", rate, serr)
		}
		if took > 10*time.Second || !strings.Contains(strings.Join(step.Warnings, "\n"), "stopped early: ") {
			t.Errorf("rate %v: the run took %v (of 20s), %d requests, warnings %q; want it stopped early, saying why", rate, took, step.Requests, step.Warnings)
		}
	}
}

// TestScriptBusyWarning: a request() that stalls (a loop of 100,000 additions) takes most of
// the run's time on its thread; the step says that the script set the pace. A quick
// request() gets no such warning.
func TestScriptBusyWarning(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	sc := scenario.Scenario{URL: srv.URL + "/"}
	target, _ := scenario.ParseTarget(sc.URL)
	for _, tc := range []struct {
		name, code string
		warn       bool
	}{
		// A fixed loop, not os.clock(): that is the process's CPU time, which other goroutines
		// (the test server, other tests) advance too, so on a busy machine the "20 ms" stall
		// was a small part of the run and no warning came.
		{"stalls", "request = function()\n  local x = 0\n  for i = 1, 100000 do x = x + i end\n  return wrk.format()\nend\n", true},
		{"quick", "request = function() return wrk.format() end\n", false},
	} {
		src, err := NewString(tc.name+".lua", tc.code, sc, Options{})
		if err != nil {
			t.Fatalf("%s: NewString: %v", tc.name, err)
		}
		step, err := load.Run(context.Background(), load.Config{Connections: 2, Threads: 1, Duration: measure.Duration(time.Second), Timeout: measure.Duration(time.Second)}, src, target)
		src.Close()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		warned := strings.Contains(strings.Join(step.Warnings, "\n"), "the script, not the target, set the pace")
		t.Logf("%s: %d requests, warnings %q", tc.name, step.Requests, step.Warnings)
		if warned != tc.warn {
			t.Errorf("%s: warned %v, want %v (warnings %q)", tc.name, warned, tc.warn, step.Warnings)
		}
	}
}
