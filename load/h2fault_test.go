package load

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
)

// faultServer is an h2c server built on the Framer, so a test decides every frame: it
// answers each request with 200 "ok" unless act says otherwise.
type faultServer struct {
	ln         net.Listener
	maxStreams uint32        // SETTINGS_MAX_CONCURRENT_STREAMS (0: not sent)
	delay      time.Duration // answer after this long (from another goroutine)
	noWindow   bool          // never give flow-control credit back
	split      bool          // send each response's header block as HEADERS + CONTINUATION, with a 1xx first
	early      bool          // answer at HEADERS, before the request body
	// act is called for the k-th request of the server (from 1) on stream id; it returns
	// what to do with it.
	act func(k int64, id uint32) faultAction

	requests  atomic.Int64 // requests received
	answered  atomic.Int64 // responses sent
	clientRST atomic.Int64 // RST_STREAM frames the client sent
	maxOpen   atomic.Int64 // most streams open at once on one connection
	wg        sync.WaitGroup
}

type faultAction int

const (
	answer       faultAction = iota
	ignore                   // never answer
	reset                    // RST_STREAM INTERNAL_ERROR
	goAwayAfter              // answer, then GOAWAY with this stream as the last and close soon after
	goAwayBefore             // GOAWAY with the stream before this one as the last (this one is retried)
)

func startFaultServer(t *testing.T, fs *faultServer) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fs.ln = ln
	fs.wg.Add(1)
	go func() {
		defer fs.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			fs.wg.Add(1)
			go func() {
				defer fs.wg.Done()
				fs.serve(c)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		fs.wg.Wait()
	})
	return "http://" + ln.Addr().String() + "/"
}

func (fs *faultServer) serve(nc net.Conn) {
	defer nc.Close()
	// The test's end closes the listener; an open connection ends when the client closes it
	// or after a bound.
	_ = nc.SetDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(nc)
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := br.Read(preface); err != nil || string(preface) != http2.ClientPreface {
		return
	}
	var wmu sync.Mutex
	bw := bufio.NewWriter(nc)
	fr := http2.NewFramer(bw, br)
	var enc bytes.Buffer
	henc := hpack.NewEncoder(&enc)
	write := func(f func() error) {
		wmu.Lock()
		defer wmu.Unlock()
		_ = f()
		_ = bw.Flush()
	}
	var settings []http2.Setting
	if fs.maxStreams > 0 {
		settings = append(settings, http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: fs.maxStreams})
	}
	write(func() error { return fr.WriteSettings(settings...) })
	dec := hpack.NewDecoder(4096, nil)
	var open atomic.Int64
	respond := func(id uint32) {
		open.Add(-1) // before the client can see the response and open the next stream
		fs.answered.Add(1)
		write(func() error {
			enc.Reset()
			if fs.split {
				// Encoded in the order sent: the blocks share the encoder's dynamic table.
				_ = henc.WriteField(hpack.HeaderField{Name: ":status", Value: "103"})
				if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: enc.Bytes(), EndHeaders: true}); err != nil {
					return err
				}
				enc.Reset()
				_ = henc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
				_ = henc.WriteField(hpack.HeaderField{Name: "x-big", Value: strings.Repeat("b", 3000)})
				block := enc.Bytes()
				half := len(block) / 2
				if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block[:half], PadLength: 7}); err != nil {
					return err
				}
				if err := fr.WriteContinuation(id, true, block[half:]); err != nil {
					return err
				}
				return fr.WriteData(id, true, []byte("ok"))
			}
			_ = henc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
			_ = henc.WriteField(hpack.HeaderField{Name: "content-type", Value: "text/plain"})
			if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: enc.Bytes(), EndHeaders: true}); err != nil {
				return err
			}
			return fr.WriteData(id, true, []byte("ok"))
		})
	}
	var goingAway atomic.Bool
	request := func(id uint32) {
		k := fs.requests.Add(1)
		if n := open.Add(1); n > fs.maxOpen.Load() {
			fs.maxOpen.Store(n) // one writer per connection; good enough for a maximum
		}
		act := answer
		if fs.act != nil {
			act = fs.act(k, id)
		}
		if goingAway.Load() {
			act = ignore // above the last stream: the client must retry it elsewhere
		}
		switch act {
		case answer:
			if fs.delay > 0 {
				time.AfterFunc(fs.delay, func() { respond(id) })
				return
			}
			respond(id)
		case reset:
			open.Add(-1)
			write(func() error { return fr.WriteRSTStream(id, http2.ErrCodeInternal) })
		case goAwayAfter, goAwayBefore:
			last := id
			if act == goAwayBefore {
				last = id - 2
			} else {
				respond(id)
			}
			goingAway.Store(true)
			write(func() error { return fr.WriteGoAway(last, http2.ErrCodeNo, nil) })
			time.AfterFunc(300*time.Millisecond, func() { nc.Close() })
		}
	}
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				write(fr.WriteSettingsAck)
			}
		case *http2.HeadersFrame:
			_, _ = dec.DecodeFull(f.HeaderBlockFragment())
			if f.StreamEnded() || fs.early {
				request(f.StreamID)
			}
		case *http2.DataFrame:
			if n := f.Length; n > 0 && !fs.noWindow {
				write(func() error {
					_ = fr.WriteWindowUpdate(0, n)
					return fr.WriteWindowUpdate(f.StreamID, n)
				})
			}
			if f.StreamEnded() && !fs.early {
				request(f.StreamID)
			}
		case *http2.RSTStreamFrame:
			fs.clientRST.Add(1)
			open.Add(-1)
		case *http2.PingFrame:
			if !f.IsAck() {
				write(func() error { return fr.WritePing(true, f.Data) })
			}
		}
	}
}

func TestH2GoAwayMidRun(t *testing.T) {
	for _, act := range []faultAction{goAwayAfter, goAwayBefore} {
		fs := &faultServer{act: func(k int64, id uint32) faultAction {
			if k%300 == 0 {
				return act
			}
			return answer
		}}
		url := startFaultServer(t, fs)
		s := mustRunH2(t, url, Config{Requests: 2000, Connections: 2, Streams: 10})
		if s.Requests != 2000 || s.Errors.Total() != 0 || fs.answered.Load() != 2000 {
			t.Errorf("GOAWAY every 300 requests (action %d): %d responses, errors %v, server answered %d; want 2000, none, 2000", act, s.Requests, s.Errors, fs.answered.Load())
		}
		if s.HTTP2.GoAways["NO_ERROR"] == 0 || s.HTTP2.Retried == 0 {
			t.Errorf("GOAWAY mid-run: step.HTTP2 = %+v; want GOAWAY NO_ERROR counted and requests above the last stream retried", s.HTTP2)
		}
		if s.Connects < 3 {
			t.Errorf("GOAWAY mid-run: %d connections opened, want new ones after each GOAWAY", s.Connects)
		}
	}
}

func TestH2ResetByServer(t *testing.T) {
	fs := &faultServer{act: func(k int64, id uint32) faultAction {
		if k%10 == 0 {
			return reset
		}
		return answer
	}}
	url := startFaultServer(t, fs)
	s := mustRunH2(t, url, Config{Requests: 1000, Connections: 2, Streams: 10})
	if s.Attempts != 1000 || s.Requests != 900 || s.Errors.Read != 100 || s.HTTP2.Resets["INTERNAL_ERROR"] != 100 {
		t.Errorf("RST_STREAM on every 10th request: %d attempts, %d responses, errors %v, resets %v; want 1000, 900, read 100, INTERNAL_ERROR 100",
			s.Attempts, s.Requests, s.Errors, s.HTTP2.Resets)
	}
}

func TestH2MaxConcurrentStreamsHonoured(t *testing.T) {
	fs := &faultServer{maxStreams: 2, delay: time.Millisecond}
	url := startFaultServer(t, fs)
	s := mustRunH2(t, url, Config{Requests: 600, Connections: 2, Streams: 10})
	if s.Requests != 600 || fs.answered.Load() != 600 {
		t.Errorf("MAX_CONCURRENT_STREAMS 2: %d responses, server answered %d; want 600", s.Requests, fs.answered.Load())
	}
	if m := fs.maxOpen.Load(); m > 2 {
		t.Errorf("MAX_CONCURRENT_STREAMS 2 with --streams 10: the server saw %d streams open at once, want at most 2", m)
	}
	if s.HTTP2.MaxConcurrent != 2 || !strings.Contains(strings.Join(s.Warnings, "\n"), "SETTINGS_MAX_CONCURRENT_STREAMS") {
		t.Errorf("MAX_CONCURRENT_STREAMS 2: step.HTTP2.MaxConcurrent %d, warnings %q; want 2 and a warning", s.HTTP2.MaxConcurrent, s.Warnings)
	}
}

func TestH2StalledStreamTimesOut(t *testing.T) {
	fs := &faultServer{act: func(k int64, id uint32) faultAction {
		if k%50 == 0 {
			return ignore
		}
		return answer
	}}
	url := startFaultServer(t, fs)
	start := time.Now()
	s := mustRunH2(t, url, Config{Requests: 500, Connections: 2, Streams: 5, Timeout: measure.Duration(300 * time.Millisecond)})
	if s.Errors.Timeout != 10 || s.Requests != 490 || s.HTTP2.Cancelled != 10 {
		t.Errorf("every 50th stream never answered, --timeout 300ms: timeouts %d, responses %d, cancelled %d; want 10, 490, 10", s.Errors.Timeout, s.Requests, s.HTTP2.Cancelled)
	}
	time.Sleep(50 * time.Millisecond) // let the server read the last RST_STREAM
	if got := fs.clientRST.Load(); got != 10 {
		t.Errorf("the server saw %d RST_STREAM from the client, want 10 (one per timed-out stream)", got)
	}
	if s.Connects != 2 {
		t.Errorf("timeouts replaced connections: %d opened, want 2 (a stream timeout resets the stream, not the connection)", s.Connects)
	}
	if p := s.AllAttempts.Max(); p < 300*time.Millisecond || p > time.Second {
		t.Errorf("timed-out attempts last up to %v, want about the 300ms timeout", p)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("run took %v", el)
	}
}

func TestH2FlowControlStallTimesOut(t *testing.T) {
	fs := &faultServer{noWindow: true}
	url := startFaultServer(t, fs)
	sc := scenario.Scenario{Method: "POST", Body: strings.Repeat("x", 100000)}
	s := mustRunH2(t, url, Config{Requests: 4, Connections: 1, Streams: 4, Timeout: measure.Duration(200 * time.Millisecond)}, sc)
	if s.Errors.Timeout != 4 || s.HTTP2.FlowStalls == 0 {
		t.Errorf("100 KB bodies to a server that never opens its window: timeouts %d, flow stalls %d; want 4 timeouts and stalls counted", s.Errors.Timeout, s.HTTP2.FlowStalls)
	}
}

// Open loop: a stream that times out is counted and the schedule goes on over the same
// connections; latency is measured from when each request was due. The timeout is long
// enough that no answered stream reaches it on a starved machine (a late answer would be
// one more timeout), and there are streams enough for all 20 unanswered ones at once.
func TestH2OpenLoopTimeouts(t *testing.T) {
	fs := &faultServer{act: func(k int64, id uint32) faultAction {
		if k%20 == 0 {
			return ignore
		}
		return answer
	}}
	url := startFaultServer(t, fs)
	s := mustRunH2(t, url, Config{Rate: 1000, Requests: 400, Connections: 2, Streams: 16, Timeout: measure.Duration(2 * time.Second)})
	if s.Errors.Timeout != 20 || s.Requests != 380 || s.Open.Scheduled != 400 || s.HTTP2.Cancelled != 20 {
		t.Errorf("open loop, every 20th stream unanswered: timeouts %d, responses %d, scheduled %d, cancelled %d; want 20, 380, 400, 20",
			s.Errors.Timeout, s.Requests, s.Open.Scheduled, s.HTTP2.Cancelled)
	}
}

// Interim (1xx) responses are skipped, and a header block split over HEADERS (padded) and
// CONTINUATION is decoded whole.
func TestH2ContinuationAndInterim(t *testing.T) {
	fs := &faultServer{split: true}
	url := startFaultServer(t, fs)
	s := mustRunH2(t, url, Config{Requests: 300, Connections: 2, Streams: 3})
	if s.Requests != 300 || s.Status[200] != 300 || s.Errors.Total() != 0 {
		t.Errorf("103 then 200 split over HEADERS+CONTINUATION: %d responses, statuses %v, errors %v; want 300 of 200", s.Requests, s.Status, s.Errors)
	}
}

// Ctrl-C while every stream waits on a server that never answers: the run returns at once
// and counts nothing it abandoned.
func TestH2Interrupt(t *testing.T) {
	fs := &faultServer{act: func(int64, uint32) faultAction { return ignore }}
	url := startFaultServer(t, fs)
	src, err := scenario.NewStatic(scenario.Scenario{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	tg, _ := scenario.ParseTarget(url)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	s, err := Run(ctx, Config{HTTP2: true, Streams: 5, Connections: 2, Threads: 1, Duration: measure.Duration(30 * time.Second),
		Timeout: measure.Duration(20 * time.Second)}, src, tg)
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("interrupted after 300ms, Run returned after %v", el)
	}
	if s.Attempts != 0 {
		t.Errorf("abandoned streams were counted: %d attempts (errors %v), want 0", s.Attempts, s.Errors)
	}
}

// A server may answer before the request body is complete: the response counts, the rest of
// the body is not sent, and the stream is reset so it no longer counts against the server.
func TestH2EarlyResponse(t *testing.T) {
	fs := &faultServer{early: true, noWindow: true}
	url := startFaultServer(t, fs)
	sc := scenario.Scenario{Method: "POST", Body: strings.Repeat("x", 100000)}
	s := mustRunH2(t, url, Config{Requests: 20, Connections: 1, Streams: 2, Timeout: measure.Duration(time.Second)}, sc)
	time.Sleep(50 * time.Millisecond)
	if s.Requests != 20 || s.Errors.Total() != 0 || fs.clientRST.Load() != 20 {
		t.Errorf("answers before the body: %d responses, errors %v, %d RST_STREAM from the client; want 20, none, 20", s.Requests, s.Errors, fs.clientRST.Load())
	}
}
