package load

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
)

// nginxResponse is what nginx answers for the benchmark target's /healthz.
var nginxResponse = []byte("HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Sat, 21 Nov 2026 22:00:00 GMT\r\n" +
	"Content-Type: application/json\r\nContent-Length: 15\r\nConnection: keep-alive\r\n\r\n{\"status\":\"ok\"}")

func BenchmarkParseResponse(b *testing.B) {
	var p parser
	b.ReportAllocs()
	b.SetBytes(int64(len(nginxResponse)))
	for i := 0; i < b.N; i++ {
		p.reset(false)
		if _, err := p.feed(nginxResponse); err != nil || !p.done() {
			b.Fatalf("feed: %v done=%v", err, p.done())
		}
	}
}

func BenchmarkParseChunked(b *testing.B) {
	resp := []byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n400\r\n" + string(make([]byte, 1024)) + "\r\n0\r\n\r\n")
	var p parser
	b.ReportAllocs()
	b.SetBytes(int64(len(resp)))
	for i := 0; i < b.N; i++ {
		p.reset(false)
		if _, err := p.feed(resp); err != nil || !p.done() {
			b.Fatalf("feed: %v done=%v", err, p.done())
		}
	}
}

func BenchmarkRecord(b *testing.B) {
	rec := measure.NewRecorder(measure.DefaultExpected(), false, 0)
	w := &worker{budget: -1, samples: newSampleBatch(rec, workerBatch)}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		w.record(measure.Sample{Done: int64(i) * 1000, Latency: int64(50000 + i%1000*100), Bytes: 150, Status: 200})
	}
	w.samples.flush(0)
}

// BenchmarkRecordOpen is BenchmarkRecord in open loop: each sample also carries its
// uncorrected latency and send lag.
func BenchmarkRecordOpen(b *testing.B) {
	rec := measure.NewRecorder(measure.DefaultExpected(), true, 0)
	w := &worker{budget: -1, samples: newSampleBatch(rec, workerBatch)}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		lat := int64(50000 + i%1000*100)
		w.record(measure.Sample{Done: int64(i) * 1000, Latency: lat, Uncorrected: lat - int64(i%50*100), Bytes: 150, Status: 200})
	}
	w.samples.flush(0)
}

func BenchmarkRequestBuild(b *testing.B) {
	src, err := scenario.NewStatic(scenario.Scenario{URL: "http://127.0.0.1:8080/healthz"})
	if err != nil {
		b.Fatal(err)
	}
	req, _ := src.Requester(0, 0)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if raw, _, _, _ := req.Request(); len(raw) == 0 {
			b.Fatal("empty request")
		}
	}
}

// BenchmarkExchange is one request and response over a real loopback connection to a
// minimal server that answers every request with a canned response: the engine's whole
// per-request path (write, poll, read, parse, record).
func BenchmarkExchange(b *testing.B) {
	addr, _ := cannedServer(b, nginxResponse)
	url := "http://" + addr + "/healthz"
	src, _ := scenario.NewStatic(scenario.Scenario{URL: url})
	tg, _ := scenario.ParseTarget(url)
	cfg := Config{Connections: 1, Threads: 1, Requests: 1, Timeout: measure.Duration(2 * time.Second)}
	e := &engine{cfg: cfg, target: tg, src: src, dial: newDialer(tg, cfg), ctx: context.Background(), timeout: 2 * time.Second, slack: 100 * time.Millisecond}
	e.recs = []*measure.Recorder{measure.NewRecorder(measure.DefaultExpected(), false, 0)}
	e.base = time.Now()
	e.dial.start(e.ctx, 1)
	defer e.dial.stop()
	req, _ := src.Requester(0, 0)
	w := newWorker(e, 0, req)
	w.budget = -1
	if !w.connect(1, 0) {
		b.Fatal("connect failed")
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		raw, n, ep, head := req.Request()
		start := e.now()
		w.exchange(raw, n, ep, head, start, start)
	}
	b.StopTimer()
	w.end()
	r, errs := e.recs[0].Progress()
	if r != int64(b.N) || errs != 0 {
		b.Fatalf("recorded %d responses and %d errors, want %d and 0", r, errs, b.N)
	}
}

// cannedServer is a minimal loopback server that answers every request it reads (small,
// unpipelined: one per blank line) with resp, whatever resp holds, and counts the requests.
// It stops when the test ends.
func cannedServer(tb testing.TB, resp []byte) (addr string, requests *atomic.Int64) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	requests = new(atomic.Int64)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 4096)
				for {
					n, err := c.Read(buf)
					if err != nil {
						return
					}
					for i := 0; i+3 < n; i++ {
						if string(buf[i:i+4]) == "\r\n\r\n" {
							requests.Add(1)
							if _, err := c.Write(resp); err != nil {
								return
							}
						}
					}
				}
			}()
		}
	}()
	return ln.Addr().String(), requests
}

// BenchmarkRequestBuildTraced is BenchmarkRequestBuild with --traceparent: each request
// stamped with new ids.
func BenchmarkRequestBuildTraced(b *testing.B) {
	src, err := scenario.NewStatic(scenario.Scenario{URL: "http://127.0.0.1:8080/healthz"})
	if err != nil {
		b.Fatal(err)
	}
	req, _ := scenario.Traced(src).Requester(0, 0)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if raw, _, _, _ := req.Request(); len(raw) == 0 {
			b.Fatal("empty request")
		}
	}
}
