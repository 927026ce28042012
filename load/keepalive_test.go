package load

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
)

// connCounter serves "ok" and counts the connections it accepted.
func connCounter(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

func TestNoKeepAlive(t *testing.T) {
	for _, c := range []struct {
		name      string
		cfg       Config
		wantConns func(s *measure.Step) int64
	}{
		// Keep-alive: the 4 connections carry all 200 requests.
		{"closed keep-alive", Config{Requests: 200, Connections: 4}, func(*measure.Step) int64 { return 4 }},
		// No keep-alive: one connection per request.
		{"closed no keep-alive", Config{Requests: 200, Connections: 4, NoKeepAlive: true}, func(s *measure.Step) int64 { return s.Attempts }},
		// Open loop without keep-alive: one connection per request too.
		{"open no keep-alive", Config{Rate: 200, Duration: measure.Duration(500 * time.Millisecond), Connections: 4, NoKeepAlive: true},
			func(s *measure.Step) int64 { return s.Attempts }},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, conns := connCounter(t)
			s := run(t, ioAuto, context.Background(), srv.URL, c.cfg)
			want := c.wantConns(s)
			if s.Successes != s.Attempts || s.Attempts == 0 {
				t.Fatalf("%v: %d successes of %d attempts (errors %+v)", c.cfg, s.Successes, s.Attempts, s.Errors)
			}
			if s.Connects != want || conns.Load() != want {
				t.Errorf("%v: step counted %d connects, server accepted %d; want %d", c.cfg, s.Connects, conns.Load(), want)
			}
			if g := s.Generator; g == nil || g.Cores < 1 || g.CPU <= 0 || g.CPUCores() <= 0 || g.MachineCPUs < 1 {
				t.Errorf("%v: generator usage %+v, want apiperf's CPU, cores and machine CPUs", c.cfg, g)
			}
			if s.ConnectTime <= 0 || s.ConnectMean() <= 0 {
				t.Errorf("%v: connect time %v (mean %v), want it timed", c.cfg, s.ConnectTime, s.ConnectMean())
			}
		})
	}
}
