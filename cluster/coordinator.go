package cluster

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/apiperf/apiperf/conditions"
	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
)

// ErrJoinTimeout is returned by Join when fewer workers than asked joined in time.
var ErrJoinTimeout = errors.New("workers did not join in time")

// startLead is how far ahead of now a step's common start is set, at least: time for the
// plans to arrive and the workers to build their sources.
const startLead = 500 * time.Millisecond

// Job is what every worker is sent besides its load: the request and how to judge it.
type Job struct {
	Scenario   scenario.Scenario // unredacted: the headers and body are sent as given
	ScriptCode string            // the wrk script's text, when Scenario.Script is set
	ScriptArgs []string
	Expected   measure.StatusSet
	// Encoded, when set, is the request encoded by the coordinator's source (a gRPC call:
	// workers have no schema), sent instead of one built from Scenario.
	Encoded *scenario.Encoded
}

// Options configure a coordinator.
type Options struct {
	Workers     int           // how many workers to wait for
	Token       string        // the shared secret (never printed)
	JoinTimeout time.Duration // default DefaultJoinTimeout
	Log         io.Writer     // progress lines (default: discarded)
	// TLS, when set, makes workers join over TLS with this server configuration.
	TLS *tls.Config
	// Intervals, when set, receives the workers' intervals merged by index, in order, as a
	// step runs (the coordinator's live view and --listen).
	Intervals func(*measure.Interval)
}

// Coordinator listens for workers, hands each its share of every step and merges the steps.
// Its Step method is a sweep.StepFunc, so run, sweep and capacity can drive it level by level.
type Coordinator struct {
	ln     net.Listener
	o      Options
	job    Job
	events chan event
	wait   sync.WaitGroup // readers' forwarders

	mu      sync.Mutex
	members []*member
	lost    []string // what was lost, one line per worker
	short   []string // workers that did not do their share of requests
	closed  bool
	last    []Health     // every worker's health in the last step
	steps   []StepHealth // of every measured step (Hook)
}

// member is one joined worker.
type member struct {
	index  int
	host   string // as the worker names itself
	addr   string // its address as the coordinator sees it
	cores  int
	c      *conn
	offset time.Duration // worker clock minus coordinator clock
	rtt    time.Duration
	gone   error // set once its connection failed

	// Of the last step:
	share     load.Config
	phase     time.Duration
	step      *measure.Step
	cond      *conditions.Record // its machine during the step, checked
	intervals []*measure.Interval
	lostAt    time.Duration // since the step's common start
	lim       limits        // what its reports may hold
	heard     time.Time     // its last interval (or planned start)
}

// event is a message from worker k, or its loss (m nil).
type event struct {
	k int
	m *message
}

// Listen starts a coordinator on addr (host:port).
func Listen(addr string, job Job, o Options) (*Coordinator, error) {
	if o.Workers < 1 {
		return nil, fmt.Errorf("workers must be at least 1, got %d", o.Workers)
	}
	if err := CheckToken(o.Token); err != nil {
		return nil, err
	}
	if job.ScriptCode != "" && job.Scenario.Script == "" {
		job.Scenario.Script = "script.lua"
	}
	if o.JoinTimeout <= 0 {
		o.JoinTimeout = DefaultJoinTimeout
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening for workers: %w", err)
	}
	if o.TLS != nil {
		ln = tls.NewListener(ln, o.TLS)
	}
	return &Coordinator{ln: ln, o: o, job: job, events: make(chan event, 256)}, nil
}

// Addr is the address workers join.
func (c *Coordinator) Addr() string { return c.ln.Addr().String() }

// forward passes worker m's messages to the coordinator's event channel, then its loss,
// and beats to it until then.
func (c *Coordinator) forward(m *member) {
	defer c.wait.Done()
	done := make(chan struct{})
	go m.c.beat(done)
	for msg := range m.c.readLoop() {
		c.events <- event{m.index, msg}
	}
	close(done)
	c.events <- event{m.index, nil}
}

// Close tells the workers there is nothing more to do and closes every connection.
func (c *Coordinator) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	c.ln.Close()
	for _, m := range c.members {
		if m.gone == nil {
			m.c.send(&message{Type: msgDone}, time.Second)
		}
		m.c.nc.Close()
	}
	go func() { // drain, so the forwarders end
		for range c.events {
		}
	}()
	c.wait.Wait()
	close(c.events)
	return nil
}

// Abort drops every worker connection without a word, as a coordinator that dies would.
func (c *Coordinator) Abort() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ln.Close()
	for _, m := range c.members {
		m.c.nc.Close()
	}
}

// WatchIntervals sets where the merged intervals of the next steps go (nil: nowhere).
func (c *Coordinator) WatchIntervals(f func(*measure.Interval)) { c.o.Intervals = f }

// Partial reports whether a worker was lost or did not do its share of -n: what was merged
// lacks part of the load.
func (c *Coordinator) Partial() bool { return len(c.lost)+len(c.short) > 0 }

// Lost lists the workers lost or short of their share, one line each: who, when, and what
// they had done.
func (c *Coordinator) Lost() []string { return append(append([]string(nil), c.lost...), c.short...) }
