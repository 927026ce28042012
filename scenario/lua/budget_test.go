package lua

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
)

// Finding 1 of issue 12: a script stuck at load time fails after the load budget with a
// message that says so, in every load-time phase.
func TestScriptStuckAtLoadTime(t *testing.T) {
	for _, tc := range []struct{ name, code, want string }{
		{"top level", "while true do end", "top level still running after 200ms"},
		{"setup", "function setup(t) while true do end end", "setup still running after 200ms"},
		{"init", "function init(a) while true do end end", "init or its first request() still running after 200ms"},
		{"first request", "request = function() while true do end end", "init or its first request() still running after 200ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, err := NewString("stuck.lua", tc.code, scenario.Scenario{URL: "http://127.0.0.1:1/"}, Options{LoadBudget: 200 * time.Millisecond})
			took := time.Since(start)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "stuck.lua") {
				t.Fatalf("NewString(%q) = %v; want an error containing %q", tc.code, err, tc.want)
			}
			if took > 5*time.Second { // room for a starved -race run; without the budget it never returns
				t.Errorf("NewString(%q) took %v; want about the 200ms budget", tc.code, took)
			}
		})
	}
	// Ctrl-C while the script loads ends it at once.
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := NewString("stuck.lua", "while true do end", scenario.Scenario{URL: "http://127.0.0.1:1/"}, Options{Context: ctx, LoadBudget: time.Minute})
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Errorf("NewString cancelled = %v; want interrupted", err)
	}
}

// loopAfterFirst is a request() that answers twice (the load-time check and the run's
// first request), then says it is stuck and never returns.
const loopAfterFirst = `
n = 0
request = function()
  n = n + 1
  if n > 2 then print("stuck") while true do end end
  return wrk.format()
end
`

// signal is a writer that closes its channel at the first write.
type signal struct {
	once sync.Once
	c    chan struct{}
}

func (s *signal) Write(p []byte) (int, error) {
	s.once.Do(func() { close(s.c) })
	return len(p), nil
}

// Finding 1 of issue 12: a request() that never returns cannot outlive -d + --timeout, nor
// Ctrl-C; the run returns what it measured and no script error.
func TestScriptStuckAtRunTime(t *testing.T) {
	srv, _ := newServer(t)
	for _, tc := range []struct {
		name  string
		ctrlC bool // Ctrl-C once request() is stuck
		dur   time.Duration
		max   time.Duration // from the start (deadline) or from Ctrl-C
	}{
		// -d 1s + --timeout 400ms, plus room for a busy machine; without the deadline it never returns.
		{"deadline", false, time.Second, 15 * time.Second},
		// Long before the 30s -d.
		{"ctrl-c", true, 30 * time.Second, 10 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			stuck := &signal{c: make(chan struct{})}
			src, err := NewString("loop.lua", loopAfterFirst, scenario.Scenario{URL: srv.URL + "/"}, Options{Context: ctx, Stdout: stuck})
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			var stopped atomic.Int64 // when Ctrl-C came, in Unix nanoseconds
			if tc.ctrlC {
				// Once request() is stuck, the run's first response recorded: a fixed time
				// could come before it on a busy machine.
				go func() {
					select {
					case <-stuck.c:
						stopped.Store(time.Now().UnixNano())
						cancel()
					case <-ctx.Done():
					}
				}()
			}
			target, _ := scenario.ParseTarget(srv.URL + "/")
			cfg := load.Config{Connections: 1, Threads: 1, Duration: measure.Duration(tc.dur), Timeout: measure.Duration(400 * time.Millisecond)}
			start := time.Now()
			step, err := load.Run(ctx, cfg, src, target)
			took := time.Since(start)
			if err != nil || step == nil {
				t.Fatalf("load.Run = %v, %v; want the step measured", step, err)
			}
			if tc.ctrlC {
				if stopped.Load() == 0 {
					t.Fatalf("load.Run returned after %v before request() got stuck", took)
				}
				took = time.Since(time.Unix(0, stopped.Load()))
			}
			if took > tc.max {
				t.Errorf("load.Run took %v with a request() that never returns; want at most %v", took, tc.max)
			}
			if step.Requests < 1 {
				t.Errorf("step has %d requests; want the ones sent before request() got stuck", step.Requests)
			}
			if err := src.Err(); err != nil {
				t.Errorf("src.Err() = %v; the end of the run is not a script error", err)
			}
			t.Logf("%s: ended after %v with %d requests", tc.name, took, step.Requests)
		})
	}
}

// Every thread's state is made before traffic: a script stuck only in the second thread's
// init fails at load time too (exit 2), not once the load has started.
func TestScriptStuckInSecondThread(t *testing.T) {
	code := "local n = 0\nfunction setup(thread) n = n + 1; thread:set(\"id\", n) end\nfunction init(args) if id == 2 then while true do end end end\n"
	sc := scenario.Scenario{URL: "http://127.0.0.1:1/"}
	if _, err := NewString("second.lua", code, sc, Options{LoadBudget: 200 * time.Millisecond, Threads: 2}); err == nil || !strings.Contains(err.Error(), "still running after 200ms") {
		t.Errorf("NewString with 2 threads = %v; want the second thread's init stopped at load time", err)
	}
	src, err := NewString("second.lua", code, sc, Options{LoadBudget: 200 * time.Millisecond, Threads: 1})
	if err != nil {
		t.Fatalf("NewString with 1 thread = %v; want it loaded", err)
	}
	src.Close()
}
