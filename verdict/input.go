// Package verdict says what limited a sweep or capacity run: the generator, the target's
// CPU, something the target waits on off-CPU, growth that does not come back, errors, the
// server's own timing of its phases, or what the target's execution trace shows. Each
// claim carries its evidence and a confidence: "high" only when what would make it another
// claim was measured, else "medium" or "low" with what was missing said; where the evidence
// is missing the verdict stays silent and says what it would have needed. The claims are
// pure functions of plain inputs (Input) and of Thresholds (saved with the verdict), so the
// verdict is table-tested and can be recomputed from run.json alone.
//
// Each claim is one file: its Kind and a function of the judgement. generator.go
// (generator-bound), genlimit.go (generator-limited: a limit of the generator's machine),
// cpu.go (target-cpu-bound), waiting.go (target-waiting), growth.go (growth), errors.go
// (errors), servertiming.go (server-timing) and trace.go (gomaxprocs-limited,
// sched-latency, gc-tail). Beside them: machine.go says what a shared machine took from the
// target, plateau.go where throughput stopped growing (and Little's law), workers.go which scale-out worker
// was short of what. Adding a claim is adding such a file and one line to the claims list
// in verdict.go (a file may make several claims); a threshold it needs is a field of
// Thresholds.
package verdict

import (
	"time"

	"github.com/apiperf/apiperf/measure"
)

// Input is what the verdict reads of one run: its levels in plan order and which is the peak.
type Input struct {
	Levels []Level `json:"levels"`
	// Peak indexes Levels: the level with the highest QPS; -1 when there is none.
	Peak int `json:"peak"`
	// MachineCores is the number of CPUs of the machine apiperf ran on (0: unknown).
	MachineCores int `json:"machine_cores,omitempty"`
	// SameMachine says the target ran on the same machine (a spawned target or --target-pid),
	// so the generator and the target share MachineCores.
	SameMachine bool `json:"same_machine,omitempty"`
	// TargetProcess says how the target's process was found for its CPU ("--target-pid",
	// "listening on 127.0.0.1:8080") or why it was not; "" when nobody looked.
	TargetProcess string `json:"target_process,omitempty"`
	// Ran is the order the levels ran, as indexes of Levels, when it was not plan order (a
	// capacity search's probes); nil: plan order.
	Ran []int `json:"ran,omitempty"`
	// GRPC says the levels' Status are gRPC status codes (0 OK ... 16), not HTTP statuses.
	GRPC bool `json:"grpc,omitempty"`
}

// Level is one load level as the verdict sees it.
type Level struct {
	Label string  `json:"label"` // "c=200" or "rate=1000/s"
	Load  float64 `json:"load"`  // concurrency, or the target rate (open loop)
	Open  bool    `json:"open,omitempty"`

	QPS       float64        `json:"qps"`
	Mean      time.Duration  `json:"mean_ns"`
	P99       time.Duration  `json:"p99_ns"`
	Attempts  int64          `json:"attempts"`
	Errors    measure.Errors `json:"errors"`
	Status    map[int]int64  `json:"status,omitempty"`     // response codes counted
	LateSends int64          `json:"late_sends,omitempty"` // open loop: sent more than 1 ms after due
	Scheduled int64          `json:"scheduled,omitempty"`  // open loop: requests due in the window
	MaxLag    time.Duration  `json:"max_lag_ns,omitempty"` // open loop: worst send delay
	// GeneratorLimit is the limit of apiperf's machine the level hit ("": none), GeneratorFix its fix.
	GeneratorLimit string `json:"generator_limit,omitempty"`
	GeneratorFix   string `json:"generator_fix,omitempty"`

	// Generator is apiperf's own process during the level; nil when not measured.
	Generator *Usage `json:"generator,omitempty"`
	// Target is the target's process during the level (--target-pid or its metrics); nil when unknown.
	Target *Usage `json:"target,omitempty"`
	// Profile is what the target's profiles showed at this level; nil when none was captured.
	Profile *Profile `json:"profile,omitempty"`
	// Trace is what the target's execution trace showed at this level; nil when none (trace.go).
	Trace *Trace `json:"trace,omitempty"`
	// ServerTiming is what the responses' Server-Timing said (repetitions merged); nil: none.
	ServerTiming *measure.ServerTiming `json:"server_timing,omitempty"`
	// Exemplars are the requests kept at the level (its first run that kept any); nil: none.
	Exemplars *measure.Exemplars `json:"exemplars,omitempty"`
	// Machine is the whole machine's CPU during the level; nil when not measured.
	Machine *Machine `json:"machine,omitempty"`
	// Workers is each scale-out worker's own generator at the level (workers.go); nil on
	// one machine.
	Workers []Worker `json:"workers,omitempty"`
}

// Usage is a process's resource use over a level. A zero field is unknown.
type Usage struct {
	CPUCores float64 `json:"cpu_cores"` // mean CPU used, in cores
	// RunWaitCores is the mean time its threads waited for a CPU per second: CPU it wanted
	// and did not get (a busy machine); 0 unknown.
	RunWaitCores float64 `json:"run_wait_cores,omitempty"`
	Cores        float64 `json:"cores,omitempty"` // cores it may use (affinity, GOMAXPROCS)
	RSSBytes     float64 `json:"rss_bytes,omitempty"`
	// HeapBytes and Goroutines are the values at the end of the level (Go targets with
	// metrics); HeapRise and GoroutineRise how much they rose with time at the level's load
	// (past its ramp, trough to trough: not what more requests in flight hold).
	HeapBytes     float64 `json:"heap_bytes,omitempty"`
	HeapRise      float64 `json:"heap_rise,omitempty"`
	Goroutines    float64 `json:"goroutines,omitempty"`
	GoroutineRise float64 `json:"goroutine_rise,omitempty"`
	// SchedSlowPct is the share of goroutine wake-ups that waited over 1 ms to run
	// (the generator's own scheduler latencies); 0 when unknown.
	SchedSlowPct float64 `json:"sched_slow_pct,omitempty"`
}

// Profile is what the target's pprof profiles showed at one level.
type Profile struct {
	// TopCum lists the functions with the most cumulative CPU, in percent of the profile,
	// without the wrappers every request passes through.
	TopCum []Function `json:"top_cum,omitempty"`
	// Hot lists functions by self CPU time and HotPackages packages by it, in percent of
	// the profile, wrappers left out; HotPath is the path from the request's handler to the
	// hottest function, e.g. "main.login -> bcrypt.CompareHashAndPassword -> ...".
	Hot         []Function `json:"hot,omitempty"`
	HotPackages []Function `json:"hot_packages,omitempty"`
	HotPath     string     `json:"hot_path,omitempty"`
	// HotPlace is where a person would change the code for its CPU: the application frame
	// with the largest share below it and the library it spends it in, e.g. "main.rules
	// (52%), in regexp (regexp.MustCompile)". AllocPlace is the same for the bytes
	// allocated (the heap profile's alloc_space).
	HotPlace   string `json:"hot_place,omitempty"`
	AllocPlace string `json:"alloc_place,omitempty"`
	// HotPlacePct is HotPlace's share of the CPU: small when most of it runs in goroutines
	// a library started (argon2's lanes), where no application frame is on the stack.
	HotPlacePct float64 `json:"hot_place_pct,omitempty"`
	// GCPct and AllocPct are the shares of CPU time in GC and in allocation.
	GCPct    float64 `json:"gc_pct,omitempty"`
	AllocPct float64 `json:"alloc_pct,omitempty"`
	// Goroutines counts the request goroutines (those serving a request, not the server's
	// or libraries' background ones); Waits the places they were parked or running, most first.
	Goroutines int64  `json:"goroutines,omitempty"`
	Waits      []Wait `json:"waits,omitempty"`
	// Background lists where the goroutines serving no request were (a leak shows here).
	Background []Wait `json:"background,omitempty"`
	// Inuse lists allocation sites by live heap, in percent of it.
	Inuse []Function `json:"inuse,omitempty"`
	// Block and Mutex are the top sites of the block and mutex profiles, when the target
	// enabled them: where goroutines blocked, and which lock holders made others wait.
	Block []Contention `json:"block,omitempty"`
	Mutex []Contention `json:"mutex,omitempty"`
}

// Contention is one site of a block or mutex profile.
type Contention struct {
	Site   string `json:"site"`
	Events int64  `json:"events"`
	// Waiting is the time waited there per second of the profile: how many goroutines
	// waited there on average (0 when the profile's span is unknown).
	Waiting float64 `json:"waiting"`
	// Pct is the site's share of the profile's waiting time.
	Pct float64 `json:"pct"`
}

// Function is one row of a top table.
type Function struct {
	Name string  `json:"name"`
	Pct  float64 `json:"pct"`
}

// Wait is a place request goroutines were parked, e.g. "database/sql: waiting for a
// connection, from main.(*store).user" or "sync.(*Mutex).Lock from main.handler".
type Wait struct {
	Site   string `json:"site"`
	Count  int64  `json:"count"`
	Reason string `json:"reason,omitempty"` // e.g. "mutex", "channel", "select", "sleep", "I/O", "pool", "downstream"
}

// inFlight is the load in flight by Little's law: throughput x mean latency.
func (l Level) inFlight() float64 { return l.QPS * l.Mean.Seconds() }

// brokenPct is the share of attempts whose connection failed (connect, read or write errors).
func (l Level) brokenPct() float64 {
	if l.Attempts == 0 {
		return 0
	}
	return 100 * float64(l.Errors.Connect+l.Errors.Read+l.Errors.Write) / float64(l.Attempts)
}

// errorPct is the share of attempts that failed, status errors included.
func (l Level) errorPct() float64 {
	if l.Attempts == 0 {
		return 0
	}
	return 100 * float64(l.Errors.Total()) / float64(l.Attempts)
}
