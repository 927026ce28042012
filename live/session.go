// Package live shows a run while it runs, rendered from the engine's interval stream: a
// terminal view, Prometheus /metrics with a live page beside it, and HdrHistogram interval
// logs. A Session watches every step of one command (a run, the levels of a sweep, the
// probes of a capacity search).
package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/outfile"
)

// Config says what a session shows and where. Its zero value shows nothing.
type Config struct {
	Listen  string            // serve /metrics and the live page here ("" : no server)
	Hlog    string            // write the measured intervals to this interval log (run)
	HlogDir string            // write one <level>.hlog per level into this directory (sweep, capacity)
	Term    io.Writer         // draw the terminal view here (nil: none)
	Kind    string            // run, sweep or capacity
	Target  string            // the (redacted) URL, for labels and the page
	Labels  map[string]string // the run's labels (redacted: result.Run.RedactedLabels)
}

// Step describes one load.Run of the command.
type Phase struct {
	Label  string      // the level, e.g. "c=50" (names its .hlog)
	Name   string      // as shown, e.g. "c=50 run 2/3" ("" : Label)
	Level  int         // from 1; 0 for a plain run
	Levels int         // how many levels are planned (0: unknown, e.g. capacity probes)
	Load   load.Config // the step's load
	Warmup bool        // an unmeasured warmup: shown, not counted or logged
	// Endpoints names the scenario's endpoints (nil or one name for a single request).
	Endpoints []string
}

// Session watches one command's steps. Its methods are safe for concurrent use.
type Session struct {
	cfg     Config
	start   time.Time
	srv     *http.Server
	ln      net.Listener
	metrics *metrics
	view    *termView

	mu      sync.Mutex
	cur     Phase
	recent  []point                 // the last intervals, for the live page
	logs    map[string]*intervalLog // by file name (live/hlog.go)
	log     *intervalLog            // the current step's
	errs    []error
	scrapes []time.Time // when /metrics was last requested (the last two)
	updated time.Time   // when the last interval came in
}

// Start starts a session: it binds the listener (if any) before any load is sent.
func Start(cfg Config) (*Session, error) {
	// The session's own labels: its server reads them while the command goes on with the
	// run document's, which are redacted in place when its header is written.
	cfg.Labels = maps.Clone(cfg.Labels)
	s := &Session{cfg: cfg, start: time.Now()}
	if cfg.Term != nil {
		s.view = newTermView(cfg.Term, cfg.Kind, s.start)
	}
	if cfg.Hlog != "" {
		f, err := outfile.Create(cfg.Hlog)
		if err != nil {
			return nil, fmt.Errorf("interval log: %w", err)
		}
		s.log = &intervalLog{f: f, w: measure.NewHlogWriter(f), name: cfg.Hlog}
		s.logs = map[string]*intervalLog{cfg.Hlog: s.log}
	}
	if cfg.Listen != "" {
		ln, err := net.Listen("tcp", cfg.Listen)
		if err != nil {
			s.closeLogs()
			return nil, fmt.Errorf("--listen: %w", err)
		}
		s.ln = ln
		s.metrics = newMetrics(cfg)
		s.srv = newServer(s.handler(), ln.Addr())
		go func() { _ = s.srv.Serve(ln) }()
	}
	return s, nil
}

// Addr is the address the server listens on ("" without --listen).
func (s *Session) Addr() string {
	if s == nil || s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// Warnings are caveats to show before the run, e.g. a non-loopback listener.
func (s *Session) Warnings() []string {
	if s == nil || s.ln == nil {
		return nil
	}
	if a, ok := s.ln.Addr().(*net.TCPAddr); ok && !a.IP.IsLoopback() {
		return []string{fmt.Sprintf("--listen %s is reachable from other hosts: /metrics shows the target URL and the run's numbers", s.cfg.Listen)}
	}
	return nil
}

// Begin says which step runs next: its intervals are shown, counted and logged as that
// step's until the next Begin.
func (s *Session) Begin(st Phase) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.cur = st
	s.mu.Unlock()
	if s.metrics != nil {
		s.metrics.step(st)
	}
	if s.view != nil {
		s.view.step(st)
	}
}

// Drawing reports whether the session draws the terminal view.
func (s *Session) Drawing() bool { return s != nil && s.view != nil }

// Clear erases the terminal view (between steps, before other lines are printed).
func (s *Session) Clear() {
	if s != nil && s.view != nil {
		s.view.close()
	}
}

// Options returns the load options that feed a step's intervals to the session, as the
// step last named by Begin.
func (s *Session) Options() []load.Option {
	if s == nil || (s.view == nil && s.metrics == nil && s.log == nil && s.cfg.HlogDir == "") {
		return nil
	}
	return []load.Option{load.WithIntervals(func(iv *measure.Interval) {
		s.mu.Lock()
		st := s.cur
		s.mu.Unlock()
		s.interval(st, iv, iv.Index == 0)
	})}
}

// interval takes one interval of step st; first says it is the step's first (a repetition
// of a step starts again from index 0).
func (s *Session) interval(st Phase, iv *measure.Interval, first bool) {
	if s.view != nil {
		s.view.interval(iv)
	}
	if st.Warmup {
		return
	}
	if s.metrics != nil {
		s.metrics.interval(iv)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.updated = time.Now()
	s.recent = append(s.recent, newPoint(st, iv, s.start))
	if n := len(s.recent); n > maxRecent {
		s.recent = append(s.recent[:0], s.recent[n-maxRecent:]...)
	}
	if s.cfg.HlogDir != "" && first {
		s.log = s.levelLog(st.Label)
	}
	if s.log != nil {
		if first {
			s.log.note(s, s.log.w.Begin(iv.StepStart))
		}
		s.log.note(s, s.log.w.Write(iv))
	}
}

// maxLinger bounds how long Close waits for a scraper's last scrape.
const maxLinger = 20 * time.Second

// Close ends the session: it erases the terminal view, closes the interval log and stops the
// server. When something scraped /metrics during the run, it first waits (at most one of the
// scraper's intervals plus a second, up to maxLinger, and not past ctx) for a scrape that
// sees the final numbers.
func (s *Session) Close(ctx context.Context) error {
	if s == nil {
		return nil
	}
	if s.view != nil {
		s.view.close()
	}
	s.closeLogs()
	if s.srv != nil {
		s.linger(ctx)
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = s.srv.Shutdown(sctx)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return errors.Join(s.errs...)
}

func (s *Session) linger(ctx context.Context) {
	s.mu.Lock()
	sc, final := s.scrapes, s.updated
	s.mu.Unlock()
	if len(sc) < 2 {
		return
	}
	wait := min(sc[len(sc)-1].Sub(sc[len(sc)-2])+time.Second, maxLinger)
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		s.mu.Lock()
		last := s.scrapes[len(s.scrapes)-1]
		s.mu.Unlock()
		if last.After(final) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *Session) scraped() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scrapes = append(s.scrapes, time.Now())
	if len(s.scrapes) > 2 {
		s.scrapes = s.scrapes[len(s.scrapes)-2:]
	}
}
