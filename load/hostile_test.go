package load

import (
	"context"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
	"github.com/apiperf/apiperf/target"
)

// Issue 12: against every fault of the hostile target, apiperf makes exactly the attempts it
// was asked for, every attempt is counted once in one class, and what it counts agrees with
// what the target received and sent; on both I/O paths.
func TestHostileTargets(t *testing.T) { eachIO(t, testHostileTargets) }

func testHostileTargets(t *testing.T, mode ioMode) {
	const n = 20
	for _, tc := range []struct {
		fault target.Fault
		n     int64 // requests to send (default n)
		// check says what the step must hold, given the target's counts.
		check func(s *measure.Step, h *target.Hostile) bool
	}{
		{target.FaultNone, 0, func(s *measure.Step, h *target.Hostile) bool {
			return s.Successes == n && h.Responses.Load() == n && h.Conns.Load() <= 2
		}},
		{target.FaultReset, 0, func(s *measure.Step, h *target.Hostile) bool {
			return s.Errors.Read == n && h.Requests.Load() == n
		}},
		{target.FaultCloseAfter, 0, func(s *measure.Step, h *target.Hostile) bool {
			// Every response the target wrote is a success; the requests sent into a closing
			// connection are read (or write) errors.
			return s.Successes == h.Responses.Load() && s.Successes > 0 && s.Errors.Read+s.Errors.Write == n-s.Successes
		}},
		{target.FaultGarbage, 0, func(s *measure.Step, h *target.Hostile) bool {
			return s.Errors.Protocol == n && h.Requests.Load() == n
		}},
		{target.FaultTruncated, 0, func(s *measure.Step, h *target.Hostile) bool {
			return s.Errors.Read == n && h.Requests.Load() == n
		}},
		{target.FaultHugeHeader, 0, func(s *measure.Step, h *target.Hostile) bool {
			// over the 64 KiB header line limit, which a warning names
			return s.Errors.Protocol == n && h.Requests.Load() == n && hasWarning(s, "header line longer than 64 KiB")
		}},
		{target.FaultHugeBody, 0, func(s *measure.Step, h *target.Hostile) bool {
			return s.Successes == n && h.Responses.Load() == n && s.Bytes > n<<20
		}},
		{target.FaultBadChunk, 0, func(s *measure.Step, h *target.Hostile) bool {
			return s.Errors.Protocol == n && h.Requests.Load() == n
		}},
		{target.FaultInterim, 0, func(s *measure.Step, h *target.Hostile) bool {
			return s.Successes == n && s.Status[200] == n && h.Responses.Load() == n
		}},
		{target.FaultOneByte, 0, func(s *measure.Step, h *target.Hostile) bool {
			return s.Successes == n && h.Responses.Load() == n && s.Bytes == n*int64(len("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
		}},
		{target.FaultSlowloris, 4, func(s *measure.Step, h *target.Hostile) bool {
			return s.Errors.Timeout == 4 && h.Requests.Load() == 4
		}},
		{target.FaultTwice, 0, func(s *measure.Step, h *target.Hostile) bool {
			return s.Errors.Protocol == n && h.Requests.Load() == n && s.Successes == 0
		}},
	} {
		t.Run(string(tc.fault), func(t *testing.T) {
			h, err := target.StartHostile(tc.fault, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			want := int64(n)
			if tc.n > 0 {
				want = tc.n
			}
			// Generous: no fault but slowloris needs the timeout to end a request, and under
			// -race on a busy machine 1 MiB responses (huge-body) may be read slower than 2 s.
			timeout := 15 * time.Second
			if tc.fault == target.FaultSlowloris {
				timeout = 300 * time.Millisecond
			}
			cfg := Config{Requests: want, Connections: 2, Threads: 1, Timeout: measure.Duration(timeout)}
			s := run(t, mode, context.Background(), h.URL()+"/", cfg)
			h.Close() // the target's counts are final once its connections ended
			failed := s.Errors.Connect + s.Errors.Read + s.Errors.Write + s.Errors.Timeout + s.Errors.Protocol
			if s.Attempts != want || s.Requests+failed != s.Attempts {
				t.Errorf("%s: attempts %d = responses %d + failures %d (%+v); want %d attempts, each counted once",
					tc.fault, s.Attempts, s.Requests, failed, s.Errors, want)
			}
			if !tc.check(s, h) {
				t.Errorf("%s: step successes %d, errors %+v, statuses %v, bytes %d; target received %d requests, sent %d responses over %d connections",
					tc.fault, s.Successes, s.Errors, s.Status, s.Bytes, h.Requests.Load(), h.Responses.Load(), h.Conns.Load())
			}
		})
	}
}

// fuzzServer answers every request on loopback with resp, then closes when close is set.
func fuzzServer(tb testing.TB, resp []byte, closeAfter bool) (string, *atomic.Int64) {
	tb.Helper()
	var requests atomic.Int64
	url := serveLoopback(tb, func(c net.Conn) {
		buf := make([]byte, 4096)
		for {
			k, err := c.Read(buf)
			if err != nil || k == 0 {
				return
			}
			requests.Add(1) // the engine's requests are small: one read, one request
			if _, err := c.Write(resp); err != nil || closeAfter {
				return
			}
		}
	})
	return url, &requests
}

// serveLoopback accepts connections on a loopback port until the test ends, handing each
// to handle on a goroutine of its own (and closing it after), and returns the URL of "/".
func serveLoopback(tb testing.TB, handle func(net.Conn)) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				handle(c)
			}()
		}
	}()
	tb.Cleanup(func() { ln.Close(); <-done })
	return "http://" + ln.Addr().String() + "/"
}

// FuzzHostileResponse sends what the fuzzer makes as the response to every request, over a
// real loopback connection, on both I/O paths: the engine must neither hang nor panic, make
// exactly the attempts asked for, and count each once.
func FuzzHostileResponse(f *testing.F) {
	for _, seed := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"HTTP/1.1 200 OK\r\n\r\nuntil EOF",
		"HTTP/1.0 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx",
		"\x00garbage",
		"",
	} {
		f.Add([]byte(seed), false)
		f.Add([]byte(seed), true)
	}
	f.Fuzz(func(t *testing.T, resp []byte, closeAfter bool) {
		url, _ := fuzzServer(t, resp, closeAfter)
		tg, _ := scenario.ParseTarget(url)
		src, _ := scenario.NewStatic(scenario.Scenario{URL: url})
		for _, mode := range []ioMode{ioAuto, ioGoroutines, ioUring} {
			cfg := Config{Requests: 4, Connections: 2, Threads: 1, Timeout: measure.Duration(50 * time.Millisecond)}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			s, err := Run(ctx, cfg, src, tg, withIO(mode))
			hung := ctx.Err()
			cancel()
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			failed := s.Errors.Connect + s.Errors.Read + s.Errors.Write + s.Errors.Timeout + s.Errors.Protocol
			if hung != nil || s.Attempts != 4 || s.Requests+failed != 4 {
				t.Errorf("mode %d, response %q: attempts %d, responses %d, failures %+v (hung: %v); want 4 attempts counted once each",
					mode, resp, s.Attempts, s.Requests, s.Errors, hung)
			}
		}
	})
}

// hasWarning reports whether one of s's warnings contains part.
func hasWarning(s *measure.Step, part string) bool {
	for _, w := range s.Warnings {
		if strings.Contains(w, part) {
			return true
		}
	}
	return false
}
