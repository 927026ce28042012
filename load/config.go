// Package load is the engine: it keeps connections to the target busy (closed loop) or starts
// requests on a fixed schedule (open loop), times every attempt, classifies failures, and
// records per engine thread into measure.Recorders merged at the end.
//
// One core serves every way of doing the I/O: engine.go sets a run up (validation, recorders,
// the window) and chooses its driver; supervise.go ends it, interval.go streams it, finish.go
// sums it up. Each I/O strategy is one driver that owns its state: the closed loop on a
// goroutine per connection (workers.go, worker.go) and the open loop on them (open.go), for
// TLS, --no-keepalive and scripts that watch responses or delay requests; over plain TCP on
// Linux, one event loop per engine thread as wrk does (evloop_linux.go), closed
// (evclosed_linux.go) or open (evopen_linux.go, its parts in evsched, evpool, evwake,
// evstamp); HTTP/2 (h2.go, h2conn.go, h2frame.go, h2req.go) on golang.org/x/net/http2's
// framer and hpack. The event loops do their I/O through a poller, epoll (evepoll_linux.go)
// or io_uring (evring_linux.go), and never ask which one runs. All share the response parser,
// the recorders and the classification of failures, and the tests run on every path.
//
// A new I/O path goes in a file of its own as a driver (the interface in engine.go) that Run
// chooses; a new event-loop backend goes in a file of its own as a poller (the interface in
// evloop_linux.go), a pure wait that the open loop tells how long (pause), and one case in
// choosePoller.
package load

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apiperf/apiperf/measure"
)

// Defaults, as wrk has them (threads default to the number of CPUs, set by the caller).
const (
	DefaultConnections    = 10
	DefaultDuration       = 10 * time.Second
	DefaultTimeout        = 2 * time.Second
	DefaultMaxConnections = 10000
	DefaultStreams        = 1
	maxStreams            = 1 << 16 // HTTP/2 concurrent streams per connection
	maxSlowest            = 10000   // slowest responses kept per step
)

// Config is how hard and how long to load. It is saved in every run.json.
type Config struct {
	Connections int              `json:"connections"`        // closed loop: connections each with one request in flight; open loop: initial pool
	Threads     int              `json:"threads"`            // engine threads (GOMAXPROCS); per-thread recorders
	Duration    measure.Duration `json:"duration,omitempty"` // the measured window; 0 with Requests: no time limit
	// Warmup is load before the measured window, in the same run (connections and requests
	// carry over), so the window starts in steady state; what ends in it is not recorded.
	Warmup   measure.Duration `json:"warmup,omitempty"`
	Requests int64            `json:"requests,omitempty"` // exact total of requests; 0: until Duration
	Timeout  measure.Duration `json:"timeout"`            // a request is abandoned after this
	Rate     float64          `json:"rate,omitempty"`     // open loop: requests started per second; 0: closed loop
	// MaxConnections caps pool growth in open loop (0: DefaultMaxConnections).
	MaxConnections int  `json:"max_connections,omitempty"`
	Insecure       bool `json:"insecure,omitempty"` // skip TLS certificate verification
	// NoKeepAlive opens a new connection for every request and closes it after the response;
	// the latency then includes the connect (and TLS handshake).
	NoKeepAlive bool `json:"no_keepalive,omitempty"`
	// HTTP2 speaks HTTP/2: h2 negotiated by ALPN for https, h2c with prior knowledge for http.
	HTTP2   bool `json:"http2,omitempty"`
	Streams int  `json:"streams,omitempty"` // HTTP/2: concurrent streams per connection (0: 1)
	// LocalAddrs are the local addresses connections are opened from, as --source gave them
	// (addresses and ranges, comma separated); "": the kernel chooses, or a 127.x target spreads over
	// 127.0.0.0/8 when one address cannot hold the connections (LocalAddrsFor).
	LocalAddrs string `json:"sources,omitempty"`
	// Traceparent sends a W3C traceparent header with new random ids on every request (a
	// request that carries its own keeps it), so the slowest requests can be found in traces.
	Traceparent bool `json:"traceparent,omitempty"`
	// Slowest is how many of each step's slowest responses are kept (0: measure.DefaultSlowest).
	Slowest int `json:"slowest,omitempty"`
}

// Validate reports every problem at once.
func (c Config) Validate() error {
	var errs []error
	if c.Connections < 1 {
		errs = append(errs, fmt.Errorf("connections must be at least 1, got %d", c.Connections))
	}
	if c.Threads < 1 {
		errs = append(errs, fmt.Errorf("threads must be at least 1, got %d", c.Threads))
	}
	if c.Duration < 0 {
		errs = append(errs, fmt.Errorf("duration must not be negative, got %v", c.Duration))
	}
	if c.Warmup < 0 {
		errs = append(errs, fmt.Errorf("warmup must not be negative, got %v", c.Warmup))
	}
	if c.Warmup > 0 && (c.Duration == 0 || c.Requests > 0) {
		errs = append(errs, errors.New("a warmup needs a duration and no request count"))
	}
	if c.Requests < 0 {
		errs = append(errs, fmt.Errorf("requests must not be negative, got %d", c.Requests))
	}
	if c.Duration == 0 && c.Requests == 0 {
		errs = append(errs, errors.New("give a duration or a number of requests"))
	}
	if c.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("timeout must be positive, got %v", c.Timeout))
	}
	if c.Rate < 0 {
		errs = append(errs, fmt.Errorf("rate must not be negative, got %v", c.Rate))
	}
	if c.Rate > 0 && c.MaxConnections != 0 && c.MaxConnections < c.Connections {
		errs = append(errs, fmt.Errorf("max connections (%d) must be at least connections (%d)", c.MaxConnections, c.Connections))
	}
	if c.Streams < 0 {
		errs = append(errs, fmt.Errorf("streams must be at least 1, got %d", c.Streams))
	}
	if c.Streams > 1 && !c.HTTP2 {
		errs = append(errs, fmt.Errorf("--streams %d needs --http2 (HTTP/1.1 has one request in flight per connection)", c.Streams))
	}
	if c.HTTP2 && c.NoKeepAlive {
		errs = append(errs, errors.New("--no-keepalive is for HTTP/1.1; HTTP/2 keeps its connections (drop --http2 or --no-keepalive)"))
	}
	if _, err := ParseLocalAddrs(c.LocalAddrs); err != nil {
		errs = append(errs, err)
	}
	if c.Slowest < 0 || c.Slowest > maxSlowest {
		errs = append(errs, fmt.Errorf("slowest must be 1 to %d, got %d", maxSlowest, c.Slowest))
	}
	if c.Streams > maxStreams {
		errs = append(errs, fmt.Errorf("streams must be at most %d, got %d", maxStreams, c.Streams))
	}
	return errors.Join(errs...)
}

// StreamsPerConn is the number of concurrent streams per connection asked for (at least 1).
func (c Config) StreamsPerConn() int { return max(c.Streams, DefaultStreams) }

// Over says what the load goes over, for description lines: "" for HTTP/1.1, else
// " over HTTP/2 (10 streams per connection)".
func (c Config) Over() string {
	if !c.HTTP2 {
		return ""
	}
	return fmt.Sprintf(" over HTTP/2 (%d streams per connection)", c.StreamsPerConn())
}

// OpenLoop reports whether requests follow a rate schedule.
func (c Config) OpenLoop() bool { return c.Rate > 0 }

// MaxConns is the open-loop pool limit.
func (c Config) MaxConns() int {
	if c.MaxConnections == 0 {
		return max(DefaultMaxConnections, c.Connections)
	}
	return c.MaxConnections
}

// Conns is the most connections the load may open: the open-loop pool limit, else the
// closed loop's connections. The open-file limit is checked against it.
func (c Config) Conns() int {
	if c.OpenLoop() {
		return c.MaxConns()
	}
	return c.Connections
}

// WithConnections returns c with n connections and, closed loop, no more threads than
// connections (a thread without a connection has nothing to do).
func (c Config) WithConnections(n int) Config {
	c.Connections = n
	if n > 0 && c.Threads > n {
		c.Threads = n
	}
	return c
}

// String describes the load in one line, e.g. "closed loop: 10 connections on 2 threads for 10s".
func (c Config) String() string {
	var b strings.Builder
	if c.OpenLoop() {
		fmt.Fprintf(&b, "open loop: %s req/s over %s (up to %d)", FormatRate(c.Rate), plural(int64(c.Connections), "connection"), c.MaxConns())
	} else {
		fmt.Fprintf(&b, "closed loop: %s", plural(int64(c.Connections), "connection"))
	}
	if c.HTTP2 {
		fmt.Fprintf(&b, " over HTTP/2 with %d streams each", c.StreamsPerConn())
	}
	fmt.Fprintf(&b, " on %s", plural(int64(c.Threads), "thread"))
	switch {
	case c.Requests > 0 && c.Duration > 0:
		fmt.Fprintf(&b, ", %s or %v, whichever comes first", plural(c.Requests, "request"), c.Duration)
	case c.Requests > 0:
		fmt.Fprintf(&b, ", %s", plural(c.Requests, "request"))
	default:
		fmt.Fprintf(&b, " for %v", c.Duration)
	}
	if c.Warmup > 0 {
		fmt.Fprintf(&b, " after a %v warmup", c.Warmup)
	}
	fmt.Fprintf(&b, ", timeout %v", c.Timeout)
	if c.NoKeepAlive {
		b.WriteString(", a new connection per request")
	}
	return b.String()
}

// plural is "1 thread", "2 threads": n and the noun, with an s unless n is 1.
func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// FormatRate prints a rate in requests per second as plain digits, never an exponent: at
// most four significant digits, but whole units are never rounded away (0.125, 93.8, 187.5,
// 19998). Every rate and QPS apiperf prints goes through it.
func FormatRate(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return strconv.FormatFloat(v, 'f', -1, 64)
	case math.Abs(v) >= 1000:
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 4, 64), 64)
	return strconv.FormatFloat(r, 'f', -1, 64)
}
