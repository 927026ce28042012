// Package target is apiperf's built-in reference and demo server (`apiperf serve`).
//
// Plain mode answers GET /healthz with {"status":"ok"} like the plain net/http yardstick,
// and /knob shapes each response from its query (delay, jitter, status, size, chunked,
// close, abort, garbage, hang, work). Server-wide settings add a periodic stall and a
// throughput ceiling. Demo mode adds a small JSON API behind a switchable middleware
// chain, for profiling and tuning demos, and endpoints with one bottleneck each
// (/demo/cpu, /demo/pool, /demo/downstream, /demo/leak) for the verdict, and /demo/timing,
// which sends Server-Timing and makes known requests slow. Spawn runs the target as a child process.
package target

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"strings"
	"time"
)

// DefaultAddr is the CLI's default listen address; an empty Config.Addr means "127.0.0.1:0".
const DefaultAddr = "127.0.0.1:8080"

// MaxSize caps response sizes (Config.Size and the size knob).
const MaxSize = 1 << 30

// MaxDelay caps delays and jitters (server-wide and per request).
const MaxDelay = 10 * time.Minute

// Middleware names for Config.Middleware, in their default order (outermost first).
const (
	MiddlewareRequestID = "request-id"
	MiddlewareLogger    = "logger"
	MiddlewareDump      = "dump"
	MiddlewareRecovery  = "recovery"
	MiddlewareNone      = "none"
)

// DefaultMiddleware is the demo chain used when Config.Middleware is nil.
var DefaultMiddleware = []string{MiddlewareRequestID, MiddlewareLogger, MiddlewareDump, MiddlewareRecovery}

// Config says how the target behaves. The zero value is a plain server on a free
// loopback port. Delay, Jitter, Stall and MaxRPS apply to every request except the
// observability endpoints (/debug/pprof/, /metrics); Status and Size shape the plain
// responses (/healthz and /knob, whose query overrides them).
type Config struct {
	// Addr is the listen address; empty means "127.0.0.1:0" (a free port).
	Addr string `json:"addr,omitempty"`
	// AllowRemote permits a non-loopback Addr.
	AllowRemote bool `json:"allow_remote,omitempty"`
	// Demo adds the demo API (/api/...) behind the middleware chain.
	Demo bool `json:"demo,omitempty"`
	// Middleware is the demo chain, outermost first: nil means DefaultMiddleware,
	// an empty slice or ["none"] means no middleware. Only valid with Demo.
	Middleware []string `json:"middleware,omitempty"`
	// Pprof mounts net/http/pprof under /debug/pprof/ (the CLI turns it on with --demo).
	Pprof bool `json:"pprof,omitempty"`
	// Metrics mounts a Prometheus endpoint at /metrics (the CLI turns it on with --demo).
	Metrics bool `json:"metrics,omitempty"`
	// Delay is a fixed delay before every response.
	Delay time.Duration `json:"delay,omitempty"`
	// Jitter adds a uniform random delay in [0, Jitter).
	Jitter time.Duration `json:"jitter,omitempty"`
	// Status is the status of plain responses; 0 means 200.
	Status int `json:"status,omitempty"`
	// Size is the body size of plain responses; 0 means the {"status":"ok"} body.
	Size int `json:"size,omitempty"`
	// Stall pauses all responses during Stall out of every StallEvery (see StallSchedule).
	Stall time.Duration `json:"stall,omitempty"`
	// StallEvery is the stall period; required when Stall is set.
	StallEvery time.Duration `json:"stall_every,omitempty"`
	// MaxRPS caps the requests served per second overall; excess requests wait in line.
	// 0 means no ceiling.
	MaxRPS float64 `json:"max_rps,omitempty"`
	// MaxConns resets connections beyond this many open at once as soon as they are
	// accepted (a proxy at its connection limit, a server out of file descriptors): their
	// requests fail with a reset. 0 means no limit.
	MaxConns int `json:"max_conns,omitempty"`
	// TLS serves HTTPS (h2 and HTTP/1.1 by ALPN) with a self-signed certificate made at
	// start for 127.0.0.1, ::1 and localhost (clients need -k). Cleartext serves HTTP/1.1
	// and h2c with prior knowledge either way.
	TLS bool `json:"tls,omitempty"`
	// Log receives the demo logger and dump output and the server's error log;
	// nil means io.Discard.
	Log io.Writer `json:"-"`
}

// Validate returns every problem with c at once, or nil.
func (c Config) Validate() error {
	var errs []error
	if err := checkAddr(c.Addr, c.AllowRemote); err != nil {
		errs = append(errs, err)
	}
	if c.Middleware != nil && !c.Demo {
		errs = append(errs, errors.New("middleware needs demo mode"))
	}
	if _, err := c.middlewares(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, checkDuration("delay", c.Delay), checkDuration("jitter", c.Jitter))
	if c.Status != 0 {
		errs = append(errs, checkStatus(c.Status))
	}
	if c.Size < 0 || c.Size > MaxSize {
		errs = append(errs, fmt.Errorf("size %d is outside [0, %d]", c.Size, MaxSize))
	}
	errs = append(errs, c.stallSchedule(time.Time{}).Validate())
	if c.MaxRPS < 0 || math.IsNaN(c.MaxRPS) || math.IsInf(c.MaxRPS, 0) {
		errs = append(errs, fmt.Errorf("max-rps %v must be a finite number >= 0", c.MaxRPS))
	}
	if c.MaxConns < 0 {
		errs = append(errs, fmt.Errorf("max-conns %d must be >= 0", c.MaxConns))
	}
	return errors.Join(errs...)
}

// String describes c in one line, e.g. "demo target on 127.0.0.1:0 (middleware request-id,logger; pprof)".
func (c Config) String() string {
	var parts []string
	if c.Demo {
		mw, _ := c.middlewares()
		if len(mw) == 0 {
			parts = append(parts, "no middleware")
		} else {
			parts = append(parts, "middleware "+strings.Join(mw, ","))
		}
	}
	if c.Pprof {
		parts = append(parts, "pprof")
	}
	if c.Metrics {
		parts = append(parts, "metrics")
	}
	if c.Delay > 0 {
		parts = append(parts, "delay "+c.Delay.String())
	}
	if c.Jitter > 0 {
		parts = append(parts, "jitter "+c.Jitter.String())
	}
	if c.Status != 0 {
		parts = append(parts, fmt.Sprintf("status %d", c.Status))
	}
	if c.Size != 0 {
		parts = append(parts, fmt.Sprintf("size %d", c.Size))
	}
	if c.Stall > 0 {
		parts = append(parts, fmt.Sprintf("stall %v every %v", c.Stall, c.StallEvery))
	}
	if c.MaxRPS > 0 {
		parts = append(parts, fmt.Sprintf("max %g req/s", c.MaxRPS))
	}
	if c.MaxConns > 0 {
		parts = append(parts, fmt.Sprintf("at most %d connections", c.MaxConns))
	}
	mode := "plain"
	if c.Demo {
		mode = "demo"
	}
	if c.TLS {
		parts = append(parts, "TLS: h2 and http/1.1, self-signed")
	}
	s := fmt.Sprintf("%s target on %s", mode, c.addr())
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, "; ") + ")"
	}
	return s
}

func (c Config) addr() string {
	if c.Addr == "" {
		return "127.0.0.1:0"
	}
	return c.Addr
}

func (c Config) stallSchedule(start time.Time) StallSchedule {
	return StallSchedule{Start: start, Stall: c.Stall, Every: c.StallEvery}
}

// middlewares returns the demo chain, outermost first.
func (c Config) middlewares() ([]string, error) {
	if c.Middleware == nil {
		return DefaultMiddleware, nil
	}
	if len(c.Middleware) == 1 && c.Middleware[0] == MiddlewareNone {
		return nil, nil
	}
	seen := map[string]bool{}
	var errs []error
	for _, m := range c.Middleware {
		switch {
		case m == MiddlewareNone:
			errs = append(errs, errors.New(`middleware "none" cannot be combined with others`))
		case !isMiddleware(m):
			errs = append(errs, fmt.Errorf("unknown middleware %q (want %s or none)", m, strings.Join(DefaultMiddleware, ", ")))
		case seen[m]:
			errs = append(errs, fmt.Errorf("middleware %q given twice", m))
		}
		seen[m] = true
	}
	return c.Middleware, errors.Join(errs...)
}

func isMiddleware(name string) bool {
	for _, m := range DefaultMiddleware {
		if m == name {
			return true
		}
	}
	return false
}

// checkAddr accepts host:port whose host is loopback, unless remote is allowed.
func checkAddr(addr string, remote bool) error {
	if addr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("addr %q: %w", addr, err)
	}
	if remote || isLoopback(host) {
		return nil
	}
	return fmt.Errorf("addr %q is not a loopback address (use 127.0.0.1, [::1] or localhost, or pass --allow-remote)", addr)
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func checkDuration(name string, d time.Duration) error {
	if d < 0 || d > MaxDelay {
		return fmt.Errorf("%s %v is outside [0, %v]", name, d, MaxDelay)
	}
	return nil
}

func checkStatus(code int) error {
	if code < 200 || code > 599 {
		return fmt.Errorf("status %d is outside [200, 599]", code)
	}
	return nil
}
