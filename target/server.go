package target

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/pprof"
	"sync"
	"time"

	"github.com/apiperf/apiperf/exposition"
)

// ShutdownGrace is how long Close lets in-flight requests finish before it cuts them off.
const ShutdownGrace = 5 * time.Second

// ListeningPrefix starts the one line `apiperf serve` prints on stdout, followed by the URL.
const ListeningPrefix = "apiperf serve: listening on "

// Server is a running target. Start it with Start; stop it with Close.
type Server struct {
	cfg      Config
	ln       net.Listener
	srv      *http.Server
	url      string
	stall    StallSchedule
	limit    *limiter
	log      io.Writer // serialized writer for demo output; never nil
	stopping chan struct{}
	cancel   context.CancelFunc
	served   chan struct{} // closed when Serve returns
	serveErr error
	demo     *demoBottlenecks // the /demo/ endpoints' state; nil outside demo mode

	closeOnce sync.Once
	closeErr  error
}

// Start validates cfg, listens on cfg.Addr at once and serves in the background.
func Start(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("invalid target config: %w", err)
	}
	ln, err := net.Listen("tcp", cfg.addr())
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", cfg.addr(), err)
	}
	ln = newConnLimit(ln, cfg.MaxConns)
	base, cancel := context.WithCancel(context.Background())
	s := &Server{
		cfg:      cfg,
		ln:       ln,
		url:      "http://" + dialable(ln.Addr()),
		stall:    cfg.stallSchedule(time.Now()),
		limit:    newLimiter(cfg.MaxRPS),
		log:      newLockedWriter(cfg.Log),
		stopping: make(chan struct{}),
		cancel:   cancel,
		served:   make(chan struct{}),
	}
	h, err := s.routes()
	if err != nil {
		cancel()
		ln.Close()
		if s.demo != nil {
			s.demo.close()
		}
		return nil, err
	}
	s.srv = &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          log.New(s.log, "apiperf serve: ", log.LstdFlags),
		BaseContext:       func(net.Listener) context.Context { return base },
		Protocols:         new(http.Protocols),
	}
	s.srv.Protocols.SetHTTP1(true)
	s.srv.Protocols.SetHTTP2(true)
	s.srv.Protocols.SetUnencryptedHTTP2(true) // h2c with prior knowledge, beside HTTP/1.1
	if cfg.TLS {
		tc, err := selfSigned()
		if err != nil {
			cancel()
			ln.Close()
			return nil, err
		}
		s.srv.TLSConfig = tc
		s.ln = tls.NewListener(ln, tc)
		s.url = "https://" + dialable(ln.Addr())
	}
	go func() {
		defer close(s.served)
		if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.serveErr = fmt.Errorf("serving %s: %w", s.url, err)
		}
	}()
	return s, nil
}

// URL returns the base URL clients use, e.g. http://127.0.0.1:41234 (an unspecified
// listen address such as 0.0.0.0 is given as loopback).
func (s *Server) URL() string { return s.url }

// Addr returns the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// StallSchedule returns the server's stall schedule; its Start is when the server began listening.
func (s *Server) StallSchedule() StallSchedule { return s.stall }

// Started returns when the server began listening (time zero of the stall schedule).
func (s *Server) Started() time.Time { return s.stall.Start }

// Wait serves until ctx is done, then closes the server gracefully and returns Close's
// error; it returns early with an error if the server fails.
func (s *Server) Wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return s.Close()
	case <-s.served:
		s.Close()
		return s.serveErr
	}
}

// Close stops the server: it stops accepting, ends hanging requests, lets the others
// finish for up to ShutdownGrace, then cuts what is left. It is idempotent.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		close(s.stopping)
		ctx, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
		defer cancel()
		err := s.srv.Shutdown(ctx)
		s.cancel()
		if err != nil {
			s.srv.Close()
			s.closeErr = fmt.Errorf("shutting down target: %w", err)
		}
		<-s.served
		if s.demo != nil {
			s.demo.close()
		}
	})
	return s.closeErr
}

// routes builds the handler for s.cfg.
func (s *Server) routes() (http.Handler, error) {
	mux := http.NewServeMux()
	mux.Handle("/healthz", s.timed(s.healthz()))
	mux.Handle("/knob", http.HandlerFunc(s.knob))
	mux.Handle("/knob/", http.HandlerFunc(s.knob))
	mux.Handle("GET /hot", s.timed(http.HandlerFunc(hot)))
	mux.Handle("GET /alloc", s.timed(http.HandlerFunc(alloc)))
	mux.HandleFunc("GET /events", events)
	if s.cfg.Demo {
		mw, err := s.cfg.middlewares()
		if err != nil {
			return nil, err
		}
		api := s.timed(s.chain(mw, demoAPI()))
		mux.Handle("/api/", api)
		d, err := newDemoBottlenecks()
		if err != nil {
			return nil, err
		}
		s.demo = d
		d.routes(mux, s.timed)
	}
	if s.cfg.Pprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	if s.cfg.Metrics {
		mux.Handle("/metrics", exposition.Handler(func(p *exposition.Page) {
			exposition.WriteGo(p)
			exposition.WriteProcess(p)
		}))
	}
	return mux, nil
}

// timed applies the server-wide ceiling, delay, jitter and stall before h runs.
// With none of them configured it returns h itself.
func (s *Server) timed(h http.Handler) http.Handler {
	if s.limit == nil && !s.stall.Active() && s.cfg.Delay == 0 && s.cfg.Jitter == 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.await(r.Context(), s.cfg.Delay, s.cfg.Jitter) {
			h.ServeHTTP(w, r)
		}
	})
}

// await waits for the request's turn under the ceiling, then delay plus a random part of
// jitter, then the end of any stall. It reports false if ctx ended first.
func (s *Server) await(ctx context.Context, delay, jitter time.Duration) bool {
	now := time.Now()
	due := now
	if s.limit != nil {
		due = s.limit.reserve(now)
	}
	if jitter > 0 {
		delay += time.Duration(rand.Int64N(int64(jitter)))
	}
	due = due.Add(delay)
	if !s.sleepUntil(ctx, due) {
		return false
	}
	if s.stall.Active() {
		return s.sleepUntil(ctx, s.stall.Release(time.Now()))
	}
	return true
}

// sleepUntil waits until t; false if ctx ended first.
func (s *Server) sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// dialable turns a listener address into host:port a client can dial.
func dialable(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return a.String()
	}
	ip := tcp.IP
	switch {
	case ip == nil || ip.Equal(net.IPv4zero):
		ip = net.IPv4(127, 0, 0, 1)
	case ip.Equal(net.IPv6unspecified):
		ip = net.IPv6loopback
	}
	return net.JoinHostPort(ip.String(), fmt.Sprint(tcp.Port))
}

// lockedWriter serializes writes from concurrent handlers.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func newLockedWriter(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return &lockedWriter{w: w}
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
