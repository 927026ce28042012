package loadtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"time"

	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/procfs"
	"github.com/apiperf/apiperf/scenario"
)

// Cost is what serving one request cost, on average.
type Cost struct {
	CPU    time.Duration // CPU time (user and system)
	Allocs float64       // heap allocations
	Bytes  float64       // heap bytes allocated
}

// String writes the cost, e.g. "12.3µs CPU, 14 allocs, 1.2 kB per request".
func (c Cost) String() string {
	return fmt.Sprintf("%v CPU, %.3g allocs, %.4g B per request", c.CPU.Round(10*time.Nanosecond), c.Allocs, c.Bytes)
}

// HandlerCost is a handler's cost per request and how it was separated: Process is what
// the whole process spent per request while the handler was loaded (the handler, the HTTP
// server and the generator); Baseline is the same load against an empty handler (the server
// and the generator alone). Handler's allocations and bytes are their difference; its CPU
// is the CPU time of the handler's own calls, each read on its thread (see the package doc),
// or where the thread's clock cannot be read, the difference too.
type HandlerCost struct {
	Handler  Cost
	Process  Cost
	Baseline Cost
	// CPUTimed: Handler.CPU was read around the handler's calls, not taken as a difference.
	CPUTimed bool
}

// String writes the handler's cost.
func (c *HandlerCost) String() string { return c.Handler.String() }

// newCost separates the handler's cost from process's (per request, u over the step) with
// baseline's; the handler's CPU is its calls' own when they were timed.
func newCost(u usage, s *measure.Step, baseline Cost) *HandlerCost {
	process := u.perRequest(s)
	c := &HandlerCost{
		Process: process, Baseline: baseline,
		Handler: Cost{
			CPU:    max(process.CPU-baseline.CPU, 0),
			Allocs: max(process.Allocs-baseline.Allocs, 0),
			Bytes:  max(process.Bytes-baseline.Bytes, 0),
		},
	}
	if u.handlerCalls > 0 && u.handlerTimed {
		c.Handler.CPU = u.handlerCPU / time.Duration(u.handlerCalls)
		c.CPUTimed = true
	}
	return c
}

// timedHandler serves h and adds up the CPU time of its calls: each call runs locked to its
// thread (runtime.LockOSThread), so the thread runs nothing else from the first reading of
// its CPU clock to the second, even when the handler blocks and resumes. Goroutines the
// handler starts are not counted: their CPU is in Process only.
type timedHandler struct {
	h     http.Handler
	cpu   atomic.Int64 // nanoseconds, over calls
	calls atomic.Int64
	// untimed counts calls whose thread clock could not be read (then CPU is a difference).
	untimed atomic.Int64
}

func (t *timedHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	runtime.LockOSThread()
	c0, ok := threadCPU()
	defer func() {
		c1, ok1 := threadCPU()
		runtime.UnlockOSThread()
		if ok && ok1 {
			t.cpu.Add(int64(c1 - c0))
		} else {
			t.untimed.Add(1)
		}
		t.calls.Add(1)
	}()
	t.h.ServeHTTP(w, r)
}

// read adds the handler's calls and their CPU so far to u.
func (t *timedHandler) read(u *usage) {
	if t == nil {
		return
	}
	u.handlerCPU = time.Duration(t.cpu.Load())
	u.handlerCalls = t.calls.Load()
	u.handlerTimed = t.untimed.Load() == 0
}

// usage is the process's CPU time and heap allocations so far (or between two readings),
// and a timed handler's calls and their CPU time.
type usage struct {
	cpu           time.Duration
	allocs, bytes uint64
	cpuKnown      bool
	handlerCPU    time.Duration
	handlerCalls  int64
	handlerTimed  bool
}

var allocMetrics = []string{"/gc/heap/allocs:objects", "/gc/heap/allocs:bytes", "/gc/heap/tiny/allocs:objects"}

// readUsage reads the process's CPU time and the runtime's allocation counters, tiny
// allocations included (as runtime.MemStats.Mallocs and testing.AllocsPerRun count them).
func readUsage() usage {
	s := make([]metrics.Sample, len(allocMetrics))
	for i, n := range allocMetrics {
		s[i].Name = n
	}
	metrics.Read(s)
	u := usage{}
	u.cpu, u.cpuKnown = procfs.SelfCPU()
	if s[0].Value.Kind() == metrics.KindUint64 {
		u.allocs = s[0].Value.Uint64()
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		u.bytes = s[1].Value.Uint64()
	}
	if s[2].Value.Kind() == metrics.KindUint64 {
		u.allocs += s[2].Value.Uint64()
	}
	return u
}

// since is what was used from u0 to u.
func (u usage) since(u0 usage) usage {
	return usage{
		cpu: u.cpu - u0.cpu, allocs: u.allocs - u0.allocs, bytes: u.bytes - u0.bytes, cpuKnown: u.cpuKnown && u0.cpuKnown,
		handlerCPU: u.handlerCPU - u0.handlerCPU, handlerCalls: u.handlerCalls - u0.handlerCalls,
		handlerTimed: u.handlerTimed && u0.handlerTimed,
	}
}

// perRequest divides u over the step's attempts (each reached the server or failed trying).
func (u usage) perRequest(s *measure.Step) Cost {
	n := float64(max(s.Attempts, 1))
	c := Cost{Allocs: float64(u.allocs) / n, Bytes: float64(u.bytes) / n}
	if u.cpuKnown {
		c.CPU = time.Duration(float64(u.cpu) / n)
	}
	return c
}

// emptyHandler is the baseline's handler: the server answers 200 with no body.
var emptyHandler = http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})

// baseline runs cfg against an empty handler and returns the process's cost per request.
func (s *settings) baseline(ctx context.Context, cfg load.Config) (Cost, error) {
	srv, err := serve(emptyHandler, s.http2)
	if err != nil {
		return Cost{}, err
	}
	defer srv.close(s.timeout)
	sc, err := s.scenario(srv.url)
	if err != nil {
		return Cost{}, err
	}
	step, use, err := s.step(ctx, cfg, sc, false)
	if err != nil {
		return Cost{}, fmt.Errorf("baseline load: %w", err)
	}
	if step.Requests == 0 {
		return Cost{}, errors.New("baseline load: no response from the empty handler")
	}
	return use.perRequest(step), nil
}

// server is an in-process http.Server on a loopback port, for one load.
type server struct {
	srv  *http.Server
	done chan struct{}
	url  string
}

// serve starts h on a fresh 127.0.0.1 port (h2c too when http2).
func serve(h http.Handler, http2 bool) (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("serving the handler: %w", err)
	}
	s := &server{srv: &http.Server{Handler: h, ReadHeaderTimeout: time.Minute}, done: make(chan struct{}), url: "http://" + ln.Addr().String()}
	if http2 {
		var p http.Protocols
		p.SetHTTP1(true)
		p.SetUnencryptedHTTP2(true)
		s.srv.Protocols = &p
	}
	go func() {
		defer close(s.done)
		s.srv.Serve(ln) // returns http.ErrServerClosed on close
	}()
	return s, nil
}

// close stops the server, waiting up to grace for handlers still running (the load's
// connections are closed by then, so their requests' contexts are cancelled), then closes
// what is left.
func (s *server) close(grace time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if s.srv.Shutdown(ctx) != nil {
		s.srv.Close()
	}
	<-s.done
}

// findTarget checks the process TargetProcess names, or finds the one listening on rawURL's
// loopback address, before any request.
func (s *settings) findTarget(rawURL string) error {
	if s.targetPID == 0 {
		t, err := scenario.ParseTarget(rawURL)
		if err != nil {
			return err
		}
		if s.targetPID, _, err = procfs.LoopbackListener(t.Host, t.Port); err != nil {
			return fmt.Errorf("TargetProcess: the process of %s: %w", scenario.RedactURL(rawURL), err)
		}
	}
	if _, err := procfs.ReadSched(s.targetPID); err != nil {
		return fmt.Errorf("TargetProcess: %w", err)
	}
	return nil
}

// targetSched reads the target process's scheduler times around a measured step (TargetProcess).
func (s *settings) targetSched(measured bool) (procfs.Sched, error) {
	if !measured || !s.targetProcess {
		return procfs.Sched{}, nil
	}
	return procfs.ReadSched(s.targetPID)
}
