package live

import (
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// The live server's bounds: it shares the machine with the load, so its work is capped
// (requests in flight and per second; more are answered 503 or 429 at once, without
// rendering), and idle or slow clients are let go.
const (
	serveInFlight   = 2
	serveRate       = 20 // requests a second, in bursts of as many
	serveReadHeader = 5 * time.Second
	serveWrite      = 10 * time.Second
	serveMaxHeader  = 8 << 10
)

// serveIdle is how long an idle keep-alive connection is kept (tests shorten it).
var serveIdle = 5 * time.Second

// newServer is the live server for the listener's address: the handler behind guard.
func newServer(h http.Handler, listen net.Addr) *http.Server {
	return &http.Server{Handler: guard(h, listen), ReadHeaderTimeout: serveReadHeader, ReadTimeout: serveReadHeader,
		WriteTimeout: serveWrite, IdleTimeout: serveIdle, MaxHeaderBytes: serveMaxHeader}
}

// guard wraps h: every response says nosniff; on a loopback listener a request must name
// a loopback host (a page elsewhere cannot reach it by rebinding its DNS name); and the
// requests in flight and per second are capped.
func guard(h http.Handler, listen net.Addr) http.Handler {
	loopback := false
	if a, ok := listen.(*net.TCPAddr); ok {
		loopback = a.IP.IsLoopback()
	}
	slots := make(chan struct{}, serveInFlight)
	b := &bucket{tokens: serveRate, last: time.Now()}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if loopback && !loopbackHost(r.Host) {
			http.Error(w, "apiperf live: the Host must be localhost or a loopback address", http.StatusMisdirectedRequest)
			return
		}
		if !b.take(time.Now()) {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "apiperf live: over 20 requests a second", http.StatusTooManyRequests)
			return
		}
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
		default:
			w.Header().Set("Retry-After", "1")
			http.Error(w, "apiperf live: busy", http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// loopbackHost says whether a Host header names this machine.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// bucket is a token bucket of serveRate tokens refilled at serveRate a second.
type bucket struct {
	mu     sync.Mutex
	tokens float64
	last   time.Time
}

func (b *bucket) take(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.tokens = min(serveRate, b.tokens+now.Sub(b.last).Seconds()*serveRate)
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}
