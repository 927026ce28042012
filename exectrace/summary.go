// Package exectrace reads a Go execution trace (what /debug/pprof/trace serves) and sums
// it up for a person: GC frequency and its cost (stop-the-world, background workers, mark
// assist), scheduler latency, where goroutines spent their time, how many Ps were busy,
// the top blocking stacks (the groups of go tool trace -pprof) and the regions and tasks
// the program annotated. It uses the Go project's own trace parser, golang.org/x/exp/trace.
package exectrace

import (
	"fmt"
	"strings"
	"time"
)

// FileName is the name a saved trace gets beside the level's profiles.
const FileName = "trace.out"

// Summary is what one execution trace showed. Durations are sums over the trace's span,
// shares are percentages; a zero field is zero in the trace (or, for GOMAXPROCS, unknown).
type Summary struct {
	// Span is the time from the trace's first event to its last.
	Span time.Duration `json:"span_ns"`
	// GOMAXPROCS is the target's setting during the trace (the last value the runtime
	// reported); BusyPs how many Ps were running on average (bound to a thread: running
	// goroutines, in their short syscalls, or looking for work).
	GOMAXPROCS int     `json:"gomaxprocs,omitempty"`
	BusyPs     float64 `json:"busy_ps"`
	// GCCycles counts the GC mark phases that began in the trace.
	GCCycles int `json:"gc_cycles"`
	// STW is the stop-the-world pauses of the GC: their count, total and longest.
	STWCount int           `json:"stw_count,omitempty"`
	STWTotal time.Duration `json:"stw_total_ns,omitempty"`
	STWMax   time.Duration `json:"stw_max_ns,omitempty"`
	// STWStopping is the part of the pauses spent stopping the world (from a pause's start
	// to the last P's stop: threads waiting for a CPU to notice it on a busy machine), and
	// STWWorkMax the longest rest of a pause: the collector's own work, the world stopped.
	STWStopping time.Duration `json:"stw_stopping_ns,omitempty"`
	STWWorkMax  time.Duration `json:"stw_work_max_ns,omitempty"`
	// GCWorkers is the time the GC's background mark workers ran (dedicated, fractional
	// and idle), GCAssist the time goroutines spent in mark assist instead of their own work.
	GCWorkers time.Duration `json:"gc_workers_ns,omitempty"`
	GCAssist  time.Duration `json:"gc_assist_ns,omitempty"`
	// Running is the time goroutines ran on Ps, GC's included: the CPU the Go code used.
	Running time.Duration `json:"running_ns"`
	// Sched is the scheduler latency: from runnable to running, every wake-up in the trace.
	Sched Latency `json:"sched"`
	// States is the time goroutines spent in each state, summed over goroutines, in StateOrder.
	States []StateTime `json:"states,omitempty"`
	// Blocking holds the top stacks per group (sync, net, syscall, sched, as go tool trace
	// -pprof=TYPE), and the top stacks where goroutines were drafted into mark assist.
	Blocking []BlockGroup `json:"blocking,omitempty"`
	// Regions and Tasks are what the target annotated (trace.WithRegion, trace.NewTask),
	// by type, most total time first.
	Regions []Span `json:"regions,omitempty"`
	Tasks   []Span `json:"tasks,omitempty"`
}

// Latency is a distribution of scheduler latencies.
type Latency struct {
	Count int           `json:"count"`
	P50   time.Duration `json:"p50_ns"`
	P99   time.Duration `json:"p99_ns"`
	Max   time.Duration `json:"max_ns"`
}

// Goroutine states of StateTime, in the order Summary.States lists them.
const (
	StateRunning  = "running"
	StateRunnable = "runnable"
	StateAssist   = "GC assist"
	StateSync     = "sync"
	StateChannel  = "channel/select"
	StateNetwork  = "network"
	StateSyscall  = "syscall"
	StateSleep    = "sleep"
	StateOther    = "other waiting"
)

// StateOrder is the order of Summary.States.
var StateOrder = []string{StateRunning, StateRunnable, StateAssist, StateSync, StateChannel, StateNetwork, StateSyscall, StateSleep, StateOther}

// StateTime is the time goroutines spent in one state; Pct is its share of all goroutines' time.
type StateTime struct {
	State string        `json:"state"`
	Time  time.Duration `json:"time_ns"`
	Pct   float64       `json:"pct"`
}

// Groups of BlockGroup: the profiles of go tool trace -pprof, and mark assist.
const (
	GroupSync    = "sync"    // blocked on a channel, select, mutex or cond
	GroupNet     = "net"     // blocked on the network
	GroupSyscall = "syscall" // in a system call
	GroupSched   = "sched"   // runnable, waiting for a P
	GroupAssist  = "assist"  // drafted into GC mark assist while allocating
)

// BlockGroup is one group's top stacks: where goroutines waited, most time first.
type BlockGroup struct {
	Group  string        `json:"group"`
	Total  time.Duration `json:"total_ns"`
	Stacks []BlockStack  `json:"stacks"`
}

// BlockStack is one stack of a BlockGroup and the time goroutines spent there.
type BlockStack struct {
	Frames []Frame       `json:"frames"`
	Time   time.Duration `json:"time_ns"`
	Count  int           `json:"count"`
}

// Frame is one frame of a stack, innermost first.
type Frame struct {
	Func string `json:"func"`
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
}

// Site is where the stack is in words: the first frame outside the runtime and the
// standard library's plumbing, and the innermost frame when that is another one, e.g.
// "main.handler (in runtime.chanrecv1)".
func (b BlockStack) Site() string {
	if len(b.Frames) == 0 {
		return "(no stack)"
	}
	inner := b.Frames[0].Func
	for _, f := range b.Frames {
		if strings.HasPrefix(inner, "runtime.trace") {
			inner = f.Func // the tracer's own frames say nothing of where the goroutine was
		}
		if !isRuntime(f.Func) {
			if f.Func == inner {
				return f.Func
			}
			return f.Func + " (in " + inner + ")"
		}
	}
	return inner
}

// Function is the stack's first frame outside the runtime and the standard library's
// plumbing (the program's code that waited or allocated), else its first frame outside
// the runtime, else its innermost frame.
func (b BlockStack) Function() string {
	for _, f := range b.Frames {
		if !isRuntime(f.Func) {
			return f.Func
		}
	}
	for _, f := range b.Frames {
		if !isRuntimeOwn(f.Func) {
			return f.Func
		}
	}
	if len(b.Frames) == 0 {
		return ""
	}
	return b.Frames[0].Func
}

// isRuntimeOwn: frames of the runtime itself (not runtime/trace or runtime/pprof).
func isRuntimeOwn(fn string) bool { return strings.HasPrefix(fn, "runtime.") }

// isRuntime: frames of the runtime and the standard library's waiting primitives.
func isRuntime(fn string) bool {
	for _, p := range []string{"runtime.", "internal/", "sync.", "syscall.", "net.", "os.", "io.", "bufio.", "net/http.", "crypto/tls."} {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
}

// Span is one region or task type and the durations of its instances that ended in the trace.
type Span struct {
	Name  string        `json:"name"`
	Count int           `json:"count"`
	Total time.Duration `json:"total_ns"`
	Mean  time.Duration `json:"mean_ns"`
	Max   time.Duration `json:"max_ns"`
}

// GCPerSecond is the number of GC cycles per second of trace.
func (s *Summary) GCPerSecond() float64 {
	if s == nil || s.Span <= 0 {
		return 0
	}
	return float64(s.GCCycles) / s.Span.Seconds()
}

// GCCPUPct is the GC's share of the time goroutines ran: background workers and assists.
func (s *Summary) GCCPUPct() float64 { return s.pctOfRunning(s.GCWorkers + s.GCAssist) }

// AssistPct is mark assist's share of the time goroutines ran.
func (s *Summary) AssistPct() float64 { return s.pctOfRunning(s.GCAssist) }

func (s *Summary) pctOfRunning(d time.Duration) float64 {
	if s == nil || s.Running <= 0 {
		return 0
	}
	return 100 * float64(d) / float64(s.Running)
}

// Group returns the blocking group named g, or nil.
func (s *Summary) Group(g string) *BlockGroup {
	if s == nil {
		return nil
	}
	for i := range s.Blocking {
		if s.Blocking[i].Group == g {
			return &s.Blocking[i]
		}
	}
	return nil
}

// Line is the summary in one line, e.g. "GC 41.0 cycles/s, STW 1.2ms (max 310us), GC CPU
// 12% (assist 3%), sched latency p50 8us p99 1.2ms, GOMAXPROCS 2 (1.4 busy)".
func (s *Summary) Line() string {
	procs := "GOMAXPROCS ?"
	if s.GOMAXPROCS > 0 {
		procs = fmt.Sprintf("GOMAXPROCS %d", s.GOMAXPROCS)
	}
	return fmt.Sprintf("GC %.1f cycles/s, STW %s (max %s), GC CPU %.0f%% (assist %.0f%%), sched latency p50 %s p99 %s, %s (%.1f busy)",
		s.GCPerSecond(), Short(s.STWTotal), Short(s.STWMax), s.GCCPUPct(), s.AssistPct(),
		Short(s.Sched.P50), Short(s.Sched.P99), procs, s.BusyPs)
}

// Short writes d with about three significant digits: 310us, 1.2ms, 2.05s.
func Short(d time.Duration) string {
	switch {
	case d == 0:
		return "0s"
	case d < time.Microsecond:
		return fmt.Sprintf("%dns", d.Nanoseconds())
	case d < time.Millisecond:
		return trim(float64(d)/float64(time.Microsecond)) + "us"
	case d < time.Second:
		return trim(float64(d)/float64(time.Millisecond)) + "ms"
	default:
		return trim(d.Seconds()) + "s"
	}
}

// trim prints v with at most one decimal below 10, none above.
func trim(v float64) string {
	if v >= 10 {
		return fmt.Sprintf("%.0f", v)
	}
	s := fmt.Sprintf("%.1f", v)
	return strings.TrimSuffix(s, ".0")
}
