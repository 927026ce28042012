package exectrace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/exp/trace"
)

// TopStacks is how many stacks Read keeps per blocking group.
const TopStacks = 5

// MinVersion is the oldest trace format read: Go 1.22's, the first the runtime writes
// with the events the summary needs (older ones are converted lossily by the parser).
const MinVersion = 22

// Version reads the Go minor version from a trace's header ("go 1.23 trace\x00..."); an
// error when b does not start like a Go execution trace.
func Version(b []byte) (int, error) {
	const prefix = "go 1."
	if !bytes.HasPrefix(b, []byte(prefix)) {
		return 0, errors.New("not a Go execution trace (no \"go 1.N trace\" header)")
	}
	rest := b[len(prefix):]
	end := bytes.IndexByte(rest, ' ')
	if end < 0 || !bytes.HasPrefix(rest[end:], []byte(" trace")) {
		return 0, errors.New("not a Go execution trace (no \"go 1.N trace\" header)")
	}
	v, err := strconv.Atoi(string(rest[:end]))
	if err != nil {
		return 0, fmt.Errorf("trace header version %q: %w", rest[:end], err)
	}
	return v, nil
}

// Read parses a whole trace from r, streaming, and sums it up. A trace older than Go
// 1.22's format, or one the parser rejects, is an error.
func Read(r io.Reader) (*Summary, error) {
	br := bufio.NewReader(r)
	head, _ := br.Peek(32)
	v, err := Version(head)
	if err != nil {
		return nil, err
	}
	if v < MinVersion {
		return nil, fmt.Errorf("trace format of go 1.%d predates go 1.%d's; not read", v, MinVersion)
	}
	tr, err := trace.NewReader(br)
	if err != nil {
		return nil, fmt.Errorf("reading trace: %w", err)
	}
	a := newAnalysis()
	for {
		ev, err := tr.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading trace: %w", err)
		}
		a.event(ev)
	}
	return a.summary(), nil
}

// goroutine is what the analysis knows of one goroutine.
type goroutine struct {
	state    trace.GoState
	reason   string     // why it waits
	since    trace.Time // when the time it has not yet accounted for began
	readyAt  trace.Time // when it became runnable; 0 unknown
	assist   bool       // inside a GC mark assist
	gcWorker bool       // a GC background worker in its current run
	system   bool       // the runtime's own (a GC worker, the sweeper): left out of sched latency and stacks
	sampled  int        // 1 + the index of its last scheduler latency sample; 0 none
	blocked  *blocked   // the group it is counted in since entering its state
	regions  []open     // regions begun and not ended, innermost last
}

type blocked struct {
	group string
	stack trace.Stack
	at    trace.Time
}

type open struct {
	name string
	at   trace.Time
}

// analysis accumulates a Summary over a trace's events.
type analysis struct {
	first, last trace.Time
	gs          map[trace.GoID]*goroutine
	s           Summary
	states      map[string]time.Duration
	sched       []time.Duration
	stw         map[trace.GoID]trace.Time
	stwStopped  map[trace.GoID]trace.Time // when the last P stopped during each open pause
	stacks      map[string]map[trace.Stack]*BlockStack
	regions     map[string]*Span
	tasks       map[string]*Span
	taskOpen    map[trace.TaskID]open
	assists     map[trace.GoID]blocked      // open mark assists and where they began
	runtimeOwn  map[trace.Stack]bool        // stacks with no frame outside the runtime
	procs       map[trace.ProcID]trace.Time // when each running P started running
	procBusy    time.Duration               // time Ps spent running (bound to a thread)
}

func newAnalysis() *analysis {
	return &analysis{
		gs: map[trace.GoID]*goroutine{}, states: map[string]time.Duration{}, stw: map[trace.GoID]trace.Time{},
		stwStopped: map[trace.GoID]trace.Time{},
		stacks:     map[string]map[trace.Stack]*BlockStack{}, regions: map[string]*Span{}, tasks: map[string]*Span{},
		taskOpen: map[trace.TaskID]open{}, assists: map[trace.GoID]blocked{},
		runtimeOwn: map[trace.Stack]bool{}, procs: map[trace.ProcID]trace.Time{},
	}
}

func (a *analysis) event(ev trace.Event) {
	t := ev.Time()
	if a.first == 0 {
		a.first = t
	}
	a.last = t
	switch ev.Kind() {
	case trace.EventStateTransition:
		switch st := ev.StateTransition(); st.Resource.Kind {
		case trace.ResourceGoroutine:
			a.transition(ev, st, t)
		case trace.ResourceProc:
			a.proc(st, t)
		}
	case trace.EventLabel:
		// The runtime labels a GC worker goroutine each time it starts running:
		// "GC (dedicated)", "GC (fractional)", "GC (idle)".
		if l := ev.Label(); strings.HasPrefix(l.Label, "GC (") && l.Resource.Kind == trace.ResourceGoroutine {
			if g := a.gs[l.Resource.Goroutine()]; g != nil {
				a.flush(g, t)
				if !g.system && g.sampled == len(a.sched) && g.sampled > 0 {
					a.sched = a.sched[:g.sampled-1] // its wake-up was the runtime's, not the program's
				}
				g.gcWorker, g.system = true, true
			}
		}
	case trace.EventRangeBegin, trace.EventRangeActive, trace.EventRangeEnd:
		a.rangeEvent(ev, t)
	case trace.EventMetric:
		if m := ev.Metric(); m.Name == "/sched/gomaxprocs:threads" {
			a.s.GOMAXPROCS = int(m.Value.Uint64())
		}
	case trace.EventRegionBegin, trace.EventRegionEnd:
		a.region(ev, t)
	case trace.EventTaskBegin:
		tk := ev.Task()
		a.taskOpen[tk.ID] = open{tk.Type, t}
	case trace.EventTaskEnd:
		tk := ev.Task()
		if o, ok := a.taskOpen[tk.ID]; ok {
			addSpan(a.tasks, o.name, t.Sub(o.at))
			delete(a.taskOpen, tk.ID)
		}
	}
}

// isCapture: frames of net/http/pprof answering the capture, and of the tracer writing it out.
func isCapture(f Frame) bool {
	return strings.HasPrefix(f.Func, "net/http/pprof.") || strings.HasPrefix(f.Func, "runtime/pprof.") ||
		strings.HasPrefix(f.Func, "runtime/trace.(*traceMultiplexer)")
}

// runtimeOnly reports whether every frame of s is the runtime's.
func (a *analysis) runtimeOnly(s trace.Stack) bool {
	own, ok := a.runtimeOwn[s]
	if !ok {
		own = true
		for f := range s.Frames() {
			if !isRuntimeOwn(f.Func) {
				own = false
				break
			}
		}
		a.runtimeOwn[s] = own
	}
	return own
}

// proc accounts the time Ps run: from a transition to running to the next away from it.
func (a *analysis) proc(st trace.StateTransition, t trace.Time) {
	id := st.Resource.Proc()
	_, to := st.Proc()
	at, running := a.procs[id]
	switch {
	case running && to != trace.ProcRunning:
		a.procBusy += t.Sub(at)
		delete(a.procs, id)
		for g := range a.stw { // a P stopping for an open pause: the world is stopped once all have
			a.stwStopped[g] = t
		}
	case !running && to == trace.ProcRunning:
		a.procs[id] = t
	}
}

// flush accounts g's time since its last change to its current state.
func (a *analysis) flush(g *goroutine, t trace.Time) {
	d := t.Sub(g.since)
	g.since = t
	if d <= 0 {
		return
	}
	a.states[stateOf(g)] += d
	if g.state == trace.GoRunning {
		a.s.Running += d
		switch {
		case g.gcWorker:
			a.s.GCWorkers += d
		case g.assist:
			a.s.GCAssist += d
		}
	}
}

// stateOf is the StateTime a goroutine's time goes to.
func stateOf(g *goroutine) string {
	switch g.state {
	case trace.GoRunning:
		if g.assist {
			return StateAssist
		}
		return StateRunning
	case trace.GoRunnable:
		return StateRunnable
	case trace.GoSyscall:
		return StateSyscall
	case trace.GoWaiting:
		return waitState(g.reason)
	}
	return StateOther
}

// waitState sorts the runtime's wait reasons into states.
func waitState(reason string) string {
	switch {
	case reason == "network":
		return StateNetwork
	case strings.Contains(reason, "chan") || strings.Contains(reason, "select"):
		return StateChannel
	case strings.Contains(reason, "sync"):
		return StateSync
	case reason == "sleep":
		return StateSleep
	case strings.Contains(reason, "GC mark assist"):
		return StateAssist
	}
	return StateOther
}

// groupOf is the go tool trace -pprof group a goroutine entering state with reason is
// counted in, or "".
func groupOf(state trace.GoState, reason string) string {
	switch state {
	case trace.GoWaiting:
		if reason == "network" {
			return GroupNet
		}
		if strings.Contains(reason, "chan") || strings.Contains(reason, "sync") || strings.Contains(reason, "select") {
			return GroupSync
		}
	case trace.GoSyscall:
		return GroupSyscall
	case trace.GoRunnable:
		return GroupSched
	}
	return ""
}

func (a *analysis) transition(ev trace.Event, st trace.StateTransition, t trace.Time) {
	id := st.Resource.Goroutine()
	from, to := st.Goroutine()
	g := a.gs[id]
	if g == nil {
		g = &goroutine{state: from, since: t}
		a.gs[id] = g
	}
	if from == to {
		return // a status report at a generation's start, not a change
	}
	a.flush(g, t)
	if to == trace.GoRunning && from == trace.GoRunnable && g.readyAt != 0 && !g.system {
		a.sched = append(a.sched, t.Sub(g.readyAt))
		g.sampled = len(a.sched)
	}
	g.readyAt = 0
	if to == trace.GoRunnable && from != trace.GoUndetermined {
		g.readyAt = t
	}
	if from == trace.GoRunning {
		g.gcWorker = false
		if !g.system && ev.Stack() != trace.NoStack && a.runtimeOnly(ev.Stack()) {
			g.system = true
		}
	}
	g.state, g.reason = to, ""
	if to == trace.GoWaiting {
		g.reason = st.Reason
	}
	if to == trace.GoNotExist {
		delete(a.gs, id)
	}
	// Blocking stacks as go tool trace -pprof counts them: from the event that entered
	// the state (with a stack) to the one that left it.
	if b := g.blocked; b != nil {
		a.addStack(b.group, b.stack, t.Sub(b.at))
		g.blocked = nil
	}
	if grp := groupOf(to, g.reason); grp != "" && from != trace.GoUndetermined && ev.Stack() != trace.NoStack && !g.system {
		g.blocked = &blocked{grp, ev.Stack(), t}
	}
}

func (a *analysis) rangeEvent(ev trace.Event, t trace.Time) {
	r := ev.Range()
	switch {
	case r.Name == "GC concurrent mark phase":
		if ev.Kind() == trace.EventRangeBegin {
			a.s.GCCycles++
		}
	case r.Name == "GC mark assist" && r.Scope.Kind == trace.ResourceGoroutine:
		g := a.gs[r.Scope.Goroutine()]
		if g == nil {
			g = &goroutine{state: trace.GoRunning, since: t}
			a.gs[r.Scope.Goroutine()] = g
		}
		a.flush(g, t)
		g.assist = ev.Kind() != trace.EventRangeEnd
		if ev.Kind() == trace.EventRangeBegin && ev.Stack() != trace.NoStack {
			a.addStack(GroupAssist, ev.Stack(), 0)
			a.assists[r.Scope.Goroutine()] = blocked{GroupAssist, ev.Stack(), t}
		}
		if ev.Kind() == trace.EventRangeEnd {
			a.assistEnd(r.Scope.Goroutine(), t)
		}
	case strings.HasPrefix(r.Name, "stop-the-world (") && strings.Contains(r.Name, "GC"):
		id := ev.Goroutine()
		switch ev.Kind() {
		case trace.EventRangeBegin:
			a.stw[id] = t
		case trace.EventRangeEnd:
			if at, ok := a.stw[id]; ok {
				d := t.Sub(at)
				a.s.STWCount++
				a.s.STWTotal += d
				a.s.STWMax = max(a.s.STWMax, d)
				// Stopping: until the last P stopped, each waiting for its thread to be on a
				// CPU to notice (long on a machine whose CPUs others hold); the rest is the
				// collector's work with the world stopped.
				var stopping time.Duration
				if st, ok := a.stwStopped[id]; ok && st > at {
					stopping = min(st.Sub(at), d)
				}
				a.s.STWStopping += stopping
				a.s.STWWorkMax = max(a.s.STWWorkMax, d-stopping)
				delete(a.stw, id)
				delete(a.stwStopped, id)
			}
		}
	}
}

// assistEnd times the open mark assist of goroutine id against its stack.
func (a *analysis) assistEnd(id trace.GoID, t trace.Time) {
	if b, ok := a.assists[id]; ok {
		a.addStack(GroupAssist, b.stack, t.Sub(b.at))
		delete(a.assists, id)
	}
}

func (a *analysis) region(ev trace.Event, t trace.Time) {
	g := a.gs[ev.Goroutine()]
	if g == nil {
		return
	}
	name := ev.Region().Type
	if ev.Kind() == trace.EventRegionBegin {
		g.regions = append(g.regions, open{name, t})
		return
	}
	// Regions nest on a goroutine: the end matches the innermost open one of its type.
	for i := len(g.regions) - 1; i >= 0; i-- {
		if g.regions[i].name == name {
			addSpan(a.regions, name, t.Sub(g.regions[i].at))
			g.regions = slices.Delete(g.regions, i, i+1)
			return
		}
	}
}

func addSpan(m map[string]*Span, name string, d time.Duration) {
	s := m[name]
	if s == nil {
		s = &Span{Name: name}
		m[name] = s
	}
	s.Count++
	s.Total += d
	s.Max = max(s.Max, d)
}

// addStack adds d (and one occurrence, unless d is 0 and the stack was counted) to stack s of group.
func (a *analysis) addStack(group string, s trace.Stack, d time.Duration) {
	m := a.stacks[group]
	if m == nil {
		m = map[trace.Stack]*BlockStack{}
		a.stacks[group] = m
	}
	b, seen := m[s]
	if !seen {
		b = &BlockStack{}
		for f := range s.Frames() {
			b.Frames = append(b.Frames, Frame{Func: f.Func, File: f.File, Line: int(f.Line)})
		}
		if a.runtimeOnly(s) || slices.ContainsFunc(b.Frames, isCapture) {
			b = nil // the runtime's own goroutines (tracer, sweeper, scavenger) and the profiler serving this trace
		}
		m[s] = b
	}
	if b == nil {
		return
	}
	if group == GroupAssist && d == 0 {
		b.Count++ // counted when the assist begins, timed when it ends
		return
	}
	if group != GroupAssist {
		b.Count++
	}
	b.Time += d
}
