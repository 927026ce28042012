package loadtest_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/apiperf/apiperf/loadtest"
)

func hello(w http.ResponseWriter, r *http.Request) { w.Write([]byte("hello")) }

// Load an in-process handler with 200 requests over 4 connections and read the result.
func ExampleRun() {
	res, err := loadtest.Run(context.Background(), loadtest.Handler(http.HandlerFunc(hello)),
		loadtest.Connections(4), loadtest.Requests(200))
	if err != nil {
		fmt.Println(err)
		return
	}
	s := res.Step()
	fmt.Println(s.Requests, "responses,", s.Status[200], "with status 200")
	fmt.Println("p99 measured:", res.Percentile(99) > 0)
	// Output:
	// 200 responses, 200 with status 200
	// p99 measured: true
}

// An open loop: 100 requests a second for half a second, latency measured from when each
// request was due.
func ExampleRate() {
	res, err := loadtest.Run(context.Background(), loadtest.Handler(http.HandlerFunc(hello)),
		loadtest.Rate(100), loadtest.Duration(500*time.Millisecond))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("target rate:", res.Step().Open.TargetRate, "req/s")
	// Output: target rate: 100 req/s
}

// The handler's own cost per request, the generator's and the server's taken out.
func ExampleMeasureCost() {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 8192) // one allocation of 8 kB per request
		w.Write(buf[:copy(buf, "hello")])
	})
	res, err := loadtest.Run(context.Background(), loadtest.Handler(h), loadtest.MeasureCost(),
		loadtest.Connections(1), loadtest.Requests(2000))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("about %.0f kB allocated per request\n", res.Handler.Handler.Bytes/1024)
	// Output: about 8 kB allocated per request
}

// Judge a result against an objective in apiperf's --objective syntax.
func ExampleResult_Check() {
	res, err := loadtest.Run(context.Background(), loadtest.Handler(http.NotFoundHandler()),
		loadtest.Connections(1), loadtest.Requests(10))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Check("errors<=0.1%") != nil)
	// Output: true
}

// A benchmark reporting req/s, latency percentiles and the handler's CPU, allocations and
// bytes per request; compare two commits with benchstat.
func ExampleBenchmark() {
	_ = func(b *testing.B) {
		loadtest.Benchmark(b, loadtest.Handler(http.HandlerFunc(hello)), loadtest.Connections(4))
	}
}

// An SLO test: it fails, naming the summary line and the terms missed, when the handler
// gets slower.
func ExampleAssert() {
	_ = func(t *testing.T) {
		loadtest.Assert(t, "p99<=20ms,errors<=0.1%", loadtest.Handler(http.HandlerFunc(hello)),
			loadtest.Connections(4), loadtest.Duration(500*time.Millisecond))
	}
}

// Compare a handler against a slower one, interleaved as `apiperf ab` does: B sleeps 2 ms a
// request, so it loses QPS and gains p99 far over budget and the comparison fails.
func ExampleAB() {
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(2 * time.Millisecond)
		hello(w, r)
	})
	load := []loadtest.Option{loadtest.Connections(2), loadtest.Duration(150 * time.Millisecond), loadtest.Warmup(30 * time.Millisecond)}
	res, err := loadtest.AB(context.Background(), loadtest.Handler(http.HandlerFunc(hello)), loadtest.Handler(slow), load,
		loadtest.Pairs(8), loadtest.MaxPairs(8))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Outcome())
	// Output: fail
}

// A test that fails when a change makes a handler slower than the one it replaces.
func ExampleAssertAB() {
	_ = func(t *testing.T) {
		load := []loadtest.Option{loadtest.Connections(4), loadtest.Duration(300 * time.Millisecond)}
		loadtest.AssertAB(t, loadtest.Handler(http.HandlerFunc(hello)), loadtest.Handler(http.HandlerFunc(hello)), load,
			loadtest.Pairs(10), loadtest.Budget(5, 10))
	}
}
