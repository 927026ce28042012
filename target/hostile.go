package target

import (
	"bufio"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Fault is how a hostile target misbehaves. Tests load it and check that apiperf counts
// exactly what the target did.
type Fault string

// The fault modes of a hostile target.
const (
	FaultNone       Fault = "none"        // a well-behaved keep-alive "200 ok"
	FaultReset      Fault = "reset"       // the head and part of the body, then a TCP reset
	FaultCloseAfter Fault = "close-after" // close after N responses, without Connection: close
	FaultGarbage    Fault = "garbage"     // bytes that are not HTTP
	FaultTruncated  Fault = "truncated"   // Content-Length 100, 10 bytes of body, then FIN
	FaultHugeHeader Fault = "huge-header" // a header line of 1 MiB
	FaultHugeBody   Fault = "huge-body"   // a body of N bytes (default 1 MiB)
	FaultBadChunk   Fault = "bad-chunk"   // a chunk size that is not hex
	FaultInterim    Fault = "1xx"         // 100 Continue and 103 Early Hints before the response
	FaultOneByte    Fault = "one-byte"    // the response written one byte per write
	FaultSlowloris  Fault = "slowloris"   // the status line, then a header byte every 50 ms
	FaultTwice      Fault = "twice"       // two responses to every request
)

// Faults lists every fault mode.
var Faults = []Fault{FaultNone, FaultReset, FaultCloseAfter, FaultGarbage, FaultTruncated, FaultHugeHeader,
	FaultHugeBody, FaultBadChunk, FaultInterim, FaultOneByte, FaultSlowloris, FaultTwice}

// okResponse is the response of a well-behaved target.
const okResponse = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

// Hostile is a loopback target that answers every request with a fault and counts what it
// received and what it sent whole. Start it with StartHostile; stop it with Close.
type Hostile struct {
	fault Fault
	n     int
	ln    net.Listener
	wg    sync.WaitGroup
	done  chan struct{}

	mu    sync.Mutex
	conns map[net.Conn]struct{}

	// Requests counts request heads read whole; Responses counts final responses written
	// whole (faults that break a response do not count it); Conns counts connections.
	Requests, Responses, Conns atomic.Int64
}

// StartHostile listens on a loopback port and serves fault f. n is the fault's parameter:
// the responses before closing (close-after, default 3) or the body size (huge-body,
// default 1 MiB).
func StartHostile(f Fault, n int) (*Hostile, error) { return StartHostileOn("127.0.0.1:0", f, n) }

// StartHostileOn is StartHostile on addr, which must be a loopback address.
func StartHostileOn(addr string, f Fault, n int) (*Hostile, error) {
	if !slices.Contains(Faults, f) {
		return nil, fmt.Errorf("hostile target: unknown fault %q (want one of %v)", f, Faults)
	}
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || (host != "localhost" && (ip == nil || !ip.IsLoopback())) {
		return nil, fmt.Errorf("hostile target: %q is not a loopback host:port", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("hostile target: %w", err)
	}
	if n <= 0 {
		n = map[Fault]int{FaultCloseAfter: 3, FaultHugeBody: 1 << 20}[f]
	}
	h := &Hostile{fault: f, n: n, ln: ln, done: make(chan struct{}), conns: map[net.Conn]struct{}{}}
	h.wg.Add(1)
	go h.accept()
	return h, nil
}

// String describes the target's counts, e.g. "twice: received 20 requests, sent 20 responses whole over 2 connections".
func (h *Hostile) String() string {
	return fmt.Sprintf("%s: received %d requests, sent %d responses whole over %d connections",
		h.fault, h.Requests.Load(), h.Responses.Load(), h.Conns.Load())
}

// URL is the target's base URL, e.g. http://127.0.0.1:34567.
func (h *Hostile) URL() string { return "http://" + h.ln.Addr().String() }

// Close stops the target and waits for its connections to end. It is idempotent.
func (h *Hostile) Close() error {
	select {
	case <-h.done:
		return nil
	default:
	}
	close(h.done)
	err := h.ln.Close()
	h.mu.Lock()
	for c := range h.conns {
		c.Close()
	}
	h.mu.Unlock()
	h.wg.Wait()
	return err
}

func (h *Hostile) accept() {
	defer h.wg.Done()
	for {
		c, err := h.ln.Accept()
		if err != nil {
			return
		}
		h.Conns.Add(1)
		h.mu.Lock()
		h.conns[c] = struct{}{}
		h.mu.Unlock()
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			h.serve(c)
			h.mu.Lock()
			delete(h.conns, c)
			h.mu.Unlock()
			c.Close()
		}()
	}
}

// serve reads requests on c and answers each with the fault, until the fault or the client
// ends the connection.
func (h *Hostile) serve(c net.Conn) {
	r := bufio.NewReader(c)
	for served := 0; ; served++ {
		if err := readRequest(r); err != nil {
			return
		}
		h.Requests.Add(1)
		if !h.answer(c, served) {
			return
		}
	}
}

// readRequest reads one request head and its Content-Length body.
func readRequest(r *bufio.Reader) error {
	length := 0
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if name, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			length, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	_, err := r.Discard(length)
	return err
}

// answer writes the fault's answer to one request; false ends the connection.
func (h *Hostile) answer(c net.Conn, served int) bool {
	write := func(s string) bool {
		_, err := c.Write([]byte(s))
		return err == nil
	}
	whole := func(s string) bool {
		if !write(s) {
			return false
		}
		h.Responses.Add(1)
		return true
	}
	switch h.fault {
	case FaultReset:
		write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789")
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetLinger(0) // Close sends RST, not FIN
		}
		return false
	case FaultCloseAfter:
		if served >= h.n {
			return false
		}
		return whole(okResponse)
	case FaultGarbage:
		write("\x00\x01\x02 this is not HTTP\r\n\r\n")
		return true
	case FaultTruncated:
		write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789")
		return false
	case FaultHugeHeader:
		return whole("HTTP/1.1 200 OK\r\nX-Huge: " + strings.Repeat("h", 1<<20) + "\r\nContent-Length: 2\r\n\r\nok")
	case FaultHugeBody:
		return whole("HTTP/1.1 200 OK\r\nContent-Length: " + strconv.Itoa(h.n) + "\r\n\r\n" + strings.Repeat("b", h.n))
	case FaultBadChunk:
		write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n")
		return true
	case FaultInterim:
		return whole("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n" + okResponse)
	case FaultOneByte:
		for i := 0; i < len(okResponse); i++ {
			if !write(okResponse[i : i+1]) {
				return false
			}
		}
		h.Responses.Add(1)
		return true
	case FaultSlowloris:
		if !write("HTTP/1.1 200 OK\r\n") {
			return false
		}
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for deadline := time.After(10 * time.Second); ; {
			select {
			case <-h.done:
				return false
			case <-deadline:
				return false
			case <-tick.C:
				if !write("X") {
					return false
				}
			}
		}
	case FaultTwice:
		return whole(okResponse + okResponse)
	}
	return whole(okResponse)
}
