// Package loadtest runs apiperf's engine from Go: a load test is a function call, a
// benchmark or a test assertion inside `go test`.
//
// A load goes to a URL (URL) or to an http.Handler (Handler), which loadtest serves
// in-process on a real 127.0.0.1 listener for the length of the load, so requests cross the
// kernel's network stack as they would in production. The load is a closed loop
// (Connections, each with one request in flight) or an open loop (Rate, requests started on
// a fixed schedule, latency measured from when each was due), over HTTP/1.1 or HTTP/2
// (HTTP2), for a duration (Duration) or an exact number of requests (Requests). Requests
// are one request (Method, Path, Header, Body), a wrk Lua script's (Script) or a scenario
// file's mix of endpoints (Mix):
//
//	res, err := loadtest.Run(ctx, loadtest.Handler(mux),
//		loadtest.Connections(8), loadtest.Duration(time.Second), loadtest.Path("/users/42"))
//	fmt.Println(res) // 41230 requests in 1s, 41230 req/s, p50 0.18ms, p99 0.61ms, ...
//
// Run returns the same result model `apiperf run -o run.json` saves (result.Run, one
// measure.Step with HDR histograms, counts by error class, status codes, the slowest
// requests and Server-Timing), so a result from Go can be saved and rendered by every apiperf
// report.
//
// # The handler's cost
//
// With MeasureCost, a load of an in-process handler also reports what the handler itself
// spent per request: CPU time, heap allocations and bytes allocated, with the generator's
// and the HTTP server's share taken out (see HandlerCost.Handler).
//
// The CPU time is read around each of the handler's calls on its own thread: loadtest locks
// the call's goroutine to its thread (runtime.LockOSThread) and reads the thread's CPU
// clock (CLOCK_THREAD_CPUTIME_ID) before and after, so nothing else the process runs is
// counted, however busy the machine. Measured against the handler timed alone in a loop, a
// handler that computes for 135 µs came within 3% (TestTimingMeasureCostCPU). Two things
// to know: goroutines the handler starts are not counted (their CPU is in
// HandlerCost.Process only), and a handler that blocks (a database call, a sleep) is charged
// its locked thread's hand-over each time it blocks: 20 µs at one connection and 50 µs at
// four for a handler that only sleeps 1 ms, on this project's 2-core machine. Compare
// blocking handlers with each other (as benchstat does), not their CPU with a computing
// handler's.
//
// Allocations and bytes are separated by a baseline: loadtest first runs the same load
// (same connections, threads, request count or duration, same request) against an empty
// handler on the same kind of server, then the real one, and reads the Go runtime's heap
// allocation counters (runtime/metrics) around each. The engine allocates nothing per
// request and its work per request does not depend on what the handler does, so the
// baseline's allocations per request are the server's; the handler's are the difference.
// What the server does only because of the handler counts as the handler's: a response too
// large for the server's buffer is sent chunked, at a cost the empty handler never pays,
// and garbage that makes the GC run more often empties the server's pools. The counters
// are the whole process's: measure cost with nothing else running in the test binary (no
// t.Parallel loads beside it). The process's CPU time (getrusage) around both loads is kept
// too (HandlerCost.Process, HandlerCost.Baseline); where a thread's CPU clock cannot be
// read, the handler's CPU is their difference, which varies by tens of percent from one
// load to the next.
//
// # In tests
//
// Benchmark runs b.N requests inside a benchmark and reports req/s, p50-ns, p99-ns,
// p999-ns and, for a handler, CPU-ns/req, allocs/req and B/req with b.ReportMetric, in units
// benchstat reads:
//
//	go test -bench . -count 10 > new.txt && benchstat old.txt new.txt
//
// Assert runs a load and fails a test when it misses an objective written as apiperf's
// --objective takes it ("p99<=20ms,errors<=0.1%"), with the result's summary line and the
// terms it missed.
//
// Every load is its own: two loads in one process (t.Parallel) share no recorder, server,
// limit or setting, and nothing here changes GOMAXPROCS or any global. A cancelled context
// stops the load at once; Run then returns what was measured until then.
package loadtest
