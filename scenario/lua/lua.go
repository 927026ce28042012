// Package lua runs wrk Lua scripts unchanged: wrk's globals, wrk.format/lookup/connect and the
// setup/init/delay/request/response/done callbacks, with one Lua state per engine thread as
// wrk has (gopher-lua, a pure-Go Lua 5.1).
package lua

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	glua "github.com/yuin/gopher-lua"

	"github.com/apiperf/apiperf/scenario"
)

// Options are what a script gets besides its file.
type Options struct {
	// Args are the words after "--" on the command line; the script's init sees the URL as
	// args[0] and these as args[1..].
	Args []string
	// Stdout receives the script's print and io.write output (default: discarded).
	Stdout io.Writer
	// Context ends every Lua call when it is done (Ctrl-C); default: never.
	Context context.Context
	// LoadBudget bounds each load-time phase (top level, setup, init, first request);
	// default DefaultLoadBudget.
	LoadBudget time.Duration
	// Threads is how many engine threads the run will have: their states are made (and a
	// script stuck or failing in one of them found) before any traffic. Default 1.
	Threads int
	// MaxMemory bounds the process's heap while the script is loaded (default
	// DefaultMaxMemory); over it the script is stopped with an error.
	MaxMemory int64
}

// Source runs a wrk script: it is a scenario.Source whose requests come from the script.
// The main Lua state runs setup and done; each engine thread gets its own state, shared by
// that thread's connections under a mutex, because wrk scripts keep per-thread globals
// (counters, tables) that a state per connection would split.
type Source struct {
	name   string
	code   string
	sc     scenario.Scenario
	target scenario.Target
	args   []string

	outMu sync.Mutex
	out   io.Writer

	mainMu  sync.Mutex // guards main and threads
	main    *glua.LState
	threads []*thread

	base    context.Context // the process's: Ctrl-C ends every call
	budget  time.Duration   // of each load-time phase
	run     context.Context // the run's bound (Bound), guarded by mainMu
	maxMem  int64
	unwatch func() // stops the memory watch

	failed atomic.Bool // a callback raised an error: stop the run
	errMu  sync.Mutex
	err    error         // the first error a callback raised while the load ran
	fails  chan struct{} // closed with err (scenario.Failer)
}

// thread is one engine thread: its Lua state and what was learned about the script in it.
type thread struct {
	src  *Source
	id   int
	addr string
	mu   sync.Mutex // guards L: the thread's connections share it
	L    *glua.LState
	// static is the request built once (the script has no request function).
	static      []byte
	staticN     int
	first       string // the request made while checking the script, not yet sent
	hasRequest  bool
	hasResponse bool
	hasDelay    bool
	stopped     atomic.Bool  // thread:stop() was called: this thread's connections end
	busy        atomic.Int64 // ns spent in request() and response() while the load ran (Busy)
}

// New loads the wrk script at path for the request sc (URL, method, headers and body from
// the command line). A script that does not load returns its Lua error with the line.
func New(path string, sc scenario.Scenario, o Options) (*Source, error) {
	code, err := readScript(path)
	if err != nil {
		return nil, err
	}
	return NewString(path, code, sc, o)
}

// NewString is New with the script's text given; name is used in error messages.
func NewString(name, code string, sc scenario.Scenario, o Options) (*Source, error) {
	t, err := scenario.ParseTarget(sc.URL)
	if err != nil {
		return nil, err
	}
	s := &Source{name: name, code: code, sc: sc, target: t, out: o.Stdout, base: o.Context, budget: o.LoadBudget, fails: make(chan struct{})}
	if s.out == nil {
		s.out = io.Discard
	}
	if s.base == nil {
		s.base = context.Background()
	}
	if s.budget <= 0 {
		s.budget = DefaultLoadBudget
	}
	s.maxMem = o.MaxMemory
	if s.maxMem <= 0 {
		s.maxMem = DefaultMaxMemory
	}
	var stop context.CancelCauseFunc
	s.base, stop = context.WithCancelCause(s.base)
	unwatch := s.watchMemory(s.maxMem, stop)
	s.unwatch = func() { unwatch(); stop(nil) }
	s.args = append([]string{sc.URL}, o.Args...)
	ctx, cancel := s.loadCtx()
	L, err := s.newState(ctx)
	cancel()
	if err != nil {
		s.unwatch()
		return nil, err
	}
	L.SetContext(s.base)
	s.main = L
	// Every thread's state is made now (thread 0 at least): init and the first request are
	// checked before any traffic, as wrk checks the first request.
	for id := range max(o.Threads, 1) {
		if _, err := s.thread(id); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// Method is the method of the script's first request (thread 0's), what the run sends.
func (s *Source) Method() string {
	s.mainMu.Lock()
	defer s.mainMu.Unlock()
	t := s.threads[0]
	raw := t.first
	if raw == "" {
		raw = string(t.static)
	}
	if m, _, ok := strings.Cut(raw, " "); ok && m != "" {
		return m
	}
	return s.sc.MethodOrDefault()
}

// newState makes a Lua state with wrk's globals and runs the script's top level in it,
// under ctx.
func (s *Source) newState(ctx context.Context) (*glua.LState, error) {
	L := glua.NewState()
	L.SetContext(ctx)
	s.installOutput(L)
	L.GetGlobal("string").(*glua.LTable).RawSetString("rep", L.NewFunction(boundedRep(s.maxMem)))
	if err := L.DoString(bootstrap); err != nil {
		L.Close()
		return nil, fmt.Errorf("loading wrk bootstrap: %w", err)
	}
	s.setGlobals(L)
	// The chunk is named after the file so errors read "script.lua:3: ...".
	fn, err := L.Load(strings.NewReader(s.code), s.name)
	if err == nil {
		L.Push(fn)
		err = L.PCall(0, glua.MultRet, nil)
	}
	if err != nil {
		L.Close()
		return nil, s.overBudget(ctx, "top level", fmt.Errorf("loading script: %s", luaMessage(s.name, err)))
	}
	return L, nil
}

// setGlobals fills wrk.scheme/host/port/method/path/headers/body from the command line.
func (s *Source) setGlobals(L *glua.LState) {
	wrk := L.GetGlobal("wrk").(*glua.LTable)
	t := s.target
	wrk.RawSetString("scheme", glua.LString(t.Scheme))
	wrk.RawSetString("host", glua.LString(t.Host))
	if u, err := url.Parse(s.sc.URL); err == nil && u.Port() != "" {
		wrk.RawSetString("port", glua.LString(u.Port()))
	}
	wrk.RawSetString("method", glua.LString(s.sc.MethodOrDefault()))
	wrk.RawSetString("path", glua.LString(t.Path))
	hs := L.NewTable()
	for _, h := range s.sc.Headers {
		hs.RawSetString(h.Name, glua.LString(h.Value))
	}
	wrk.RawSetString("headers", hs)
	if s.sc.Body != "" {
		wrk.RawSetString("body", glua.LString(s.sc.Body))
	}
	wrk.RawSetString("format", L.NewFunction(luaFormat))
	wrk.RawSetString("lookup", L.NewFunction(luaLookup))
	wrk.RawSetString("connect", L.NewFunction(luaConnect))
}

// thread returns engine thread id's state, making it (wrk's order: the thread's state runs
// the script, setup(thread) runs in the main state, then init(args) in the thread's state).
func (s *Source) thread(id int) (*thread, error) {
	s.mainMu.Lock()
	defer s.mainMu.Unlock()
	for len(s.threads) <= id {
		s.threads = append(s.threads, nil)
	}
	if t := s.threads[id]; t != nil {
		return t, nil
	}
	ctx, cancel := s.loadCtx()
	defer cancel()
	L, err := s.newState(ctx)
	if err != nil {
		return nil, err
	}
	t := &thread{src: s, id: id, addr: s.target.Address, L: L}
	if fn, ok := s.main.GetGlobal("setup").(*glua.LFunction); ok {
		s.main.SetContext(ctx)
		err := s.main.CallByParam(glua.P{Fn: fn, Protect: true}, t.userData(s.main))
		s.main.SetContext(s.base)
		if err != nil {
			L.Close()
			return nil, s.overBudget(ctx, "setup", fmt.Errorf("script setup: %s", luaMessage(s.name, err)))
		}
	}
	if err := t.init(); err != nil {
		L.Close()
		return nil, s.overBudget(ctx, "init or its first request()", err)
	}
	L.SetContext(s.runContext())
	s.threads[id] = t
	return t, nil
}

// init runs wrk.init(args) in the thread's state and learns which callbacks the script has.
func (t *thread) init() error {
	L, s := t.L, t.src
	wrk := L.GetGlobal("wrk").(*glua.LTable)
	wrk.RawSetString("thread", t.userData(L))
	args := L.NewTable()
	for i, a := range s.args {
		args.RawSetInt(i, glua.LString(a))
	}
	if err := L.CallByParam(glua.P{Fn: wrk.RawGetString("init"), Protect: true}, args); err != nil {
		return fmt.Errorf("script init: %s", luaMessage(s.name, err))
	}
	_, t.hasRequest = L.GetGlobal("request").(*glua.LFunction)
	_, t.hasResponse = L.GetGlobal("response").(*glua.LFunction)
	_, t.hasDelay = L.GetGlobal("delay").(*glua.LFunction)
	// Check the request now so a broken request() stops the run before any traffic.
	raw, err := t.callRequest()
	if err != nil {
		return err
	}
	if len(raw) == 0 {
		return fmt.Errorf("script %s: request() returned an empty request", s.name)
	}
	if t.hasRequest {
		// The first connection sends this one, so request() is not called once for nothing.
		t.first = raw
	} else {
		t.static, t.staticN = []byte(raw), countRequests([]byte(raw))
	}
	return nil
}

// callRequest calls the global request(), or wrk.request (the request built once by
// wrk.init) when the script has none. The caller holds t.mu or owns t exclusively.
func (t *thread) callRequest() (string, error) {
	L := t.L
	fn := L.GetGlobal("request")
	if _, ok := fn.(*glua.LFunction); !ok {
		fn = L.GetGlobal("wrk").(*glua.LTable).RawGetString("request")
	}
	L.Push(fn)
	if err := L.PCall(0, 1, nil); err != nil {
		return "", fmt.Errorf("script request: %s", luaMessage(t.src.name, err))
	}
	v := L.Get(-1)
	L.Pop(1)
	str, ok := v.(glua.LString)
	if !ok {
		return "", fmt.Errorf("script %s: request() returned %s, want a string", t.src.name, v.Type())
	}
	return string(str), nil
}

// Requester returns connection conn's requester on engine thread th.
func (s *Source) Requester(th, conn int) (scenario.Requester, error) {
	t, err := s.thread(th)
	if err != nil {
		return nil, err
	}
	c := &conn_{t: t}
	if !t.hasRequest {
		c.raw, c.n = t.static, t.staticN
		c.head = isHead(t.static)
	}
	switch {
	case t.hasResponse && t.hasDelay:
		return &connBoth{c}, nil
	case t.hasResponse:
		return &connResponse{c}, nil
	case t.hasDelay:
		return &connDelay{c}, nil
	}
	return c, nil
}

// Endpoints is nil: a script is one stream of requests.
func (s *Source) Endpoints() []string { return nil }

// Static reports whether the script has no request function, so every request is built
// once per thread and costs nothing to make.
func (s *Source) Static() bool {
	s.mainMu.Lock()
	defer s.mainMu.Unlock()
	return !s.threads[0].hasRequest
}

// Stopped reports how many threads the script stopped with thread:stop().
func (s *Source) Stopped() int {
	s.mainMu.Lock()
	defer s.mainMu.Unlock()
	n := 0
	for _, t := range s.threads {
		if t != nil && t.stopped.Load() {
			n++
		}
	}
	return n
}

// Err is the first error a callback raised while the load ran (nil if none).
func (s *Source) Err() error {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.err
}

// Busy implements scenario.Busy: the time the threads spent in request() and response(),
// summed over them.
func (s *Source) Busy() time.Duration {
	s.mainMu.Lock()
	defer s.mainMu.Unlock()
	var d int64
	for _, t := range s.threads {
		if t != nil {
			d += t.busy.Load()
		}
	}
	return time.Duration(d)
}

// Failed is closed once a callback raised an error (Err): the engine stops the run.
func (s *Source) Failed() <-chan struct{} { return s.fails }

// fail keeps the first runtime error and stops the run.
func (s *Source) fail(err error) {
	s.errMu.Lock()
	if s.err == nil {
		s.err = err
		close(s.fails)
	}
	s.errMu.Unlock()
	s.failed.Store(true)
}

// Close releases the Lua states. It is idempotent.
func (s *Source) Close() {
	s.mainMu.Lock()
	defer s.mainMu.Unlock()
	if s.unwatch != nil {
		s.unwatch()
		s.unwatch = nil
	}
	for _, t := range s.threads {
		if t != nil && t.L != nil {
			t.mu.Lock()
			t.L.Close()
			t.L = nil
			t.mu.Unlock()
		}
	}
	if s.main != nil {
		s.main.Close()
		s.main = nil
	}
}

// luaMessage is a Lua error without gopher-lua's stack trace, naming the script.
func luaMessage(name string, err error) string {
	var ae *glua.ApiError
	if errors.As(err, &ae) && ae.Object != nil {
		return ae.Object.String()
	}
	return err.Error()
}
