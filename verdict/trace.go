package verdict

import (
	"fmt"
	"time"
)

// The claims only the target's execution trace can make (--pprof with --trace-seconds).
const (
	GOMAXPROCSLimited Kind = "gomaxprocs-limited" // fewer Ps than cores, and the Ps were full
	SchedLatency      Kind = "sched-latency"      // goroutines waited for a P for a large part of the request latency
	GCTail            Kind = "gc-tail"            // GC stop-the-world pauses or mark assist make the tail
)

// Trace is what the target's execution trace showed at one level.
type Trace struct {
	GOMAXPROCS int     `json:"gomaxprocs,omitempty"`
	BusyPs     float64 `json:"busy_ps"`
	// Cores is how many CPUs the target may use (its affinity, or the machine's when it runs
	// beside apiperf); 0 unknown.
	Cores       float64       `json:"cores,omitempty"`
	SchedP50    time.Duration `json:"sched_p50_ns"`
	SchedP99    time.Duration `json:"sched_p99_ns"`
	GCPerSecond float64       `json:"gc_per_second"`
	STWTotal    time.Duration `json:"stw_total_ns,omitempty"`
	STWMax      time.Duration `json:"stw_max_ns,omitempty"`
	// GCCPUPct and AssistPct are GC's and mark assist's shares of the time goroutines ran.
	GCCPUPct  float64 `json:"gc_cpu_pct"`
	AssistPct float64 `json:"assist_pct"`
	// AssistSite is where goroutines were drafted into mark assist most: the allocating code.
	AssistSite string `json:"assist_site,omitempty"`
	// Span is how long the trace lasted.
	Span time.Duration `json:"span_ns"`
}

// Thresholds of the trace claims.
const (
	// BusyShare: Ps busy this share of the time or more are full.
	BusyShare = 0.85
	// SchedShareOfP99: scheduler p99 at this share of the request p99 or more is a claim.
	SchedShareOfP99 = 0.25
	// STWShareOfP99: a GC pause at this share of the request p99 or more makes the tail.
	STWShareOfP99 = 0.25
	// AssistPctMin: mark assist taking this share of goroutine run time or more makes the tail.
	AssistPctMin = 10.0
	// GCCPUPctMin: GC taking this share of goroutine run time or more is a claim on its own.
	GCCPUPctMin = 30.0
)

// traceClaims are the trace's claims, each at the first traced level where it shows.
func traceClaims(in Input) []Claim {
	var out []Claim
	procs := firstClaim(in, gomaxprocsClaim)
	if procs != nil {
		out = append(out, *procs)
	} else if c := firstClaim(in, schedClaim); c != nil {
		out = append(out, *c) // with full Ps the GOMAXPROCS claim already says it
	}
	if c := firstClaim(in, gcClaim); c != nil {
		out = append(out, *c)
	}
	return out
}

func firstClaim(in Input, rule func(Level, *Trace) *Claim) *Claim {
	for _, l := range in.Levels {
		if l.Trace == nil || l.Trace.Span <= 0 {
			continue
		}
		if c := rule(l, l.Trace); c != nil {
			c.Level = l.Label
			return c
		}
	}
	return nil
}

// gomaxprocsClaim: the Go scheduler had fewer Ps than the cores the target may use, and
// they were full, so goroutines queued for CPU the machine had.
func gomaxprocsClaim(l Level, t *Trace) *Claim {
	if t.GOMAXPROCS <= 0 || t.Cores <= 0 || float64(t.GOMAXPROCS) >= t.Cores || t.BusyPs < BusyShare*float64(t.GOMAXPROCS) {
		return nil
	}
	c := &Claim{Kind: GOMAXPROCSLimited, Confidence: Medium,
		Summary: fmt.Sprintf("the target's Go scheduler had GOMAXPROCS=%d while it may use %g cores, and its Ps were full: the CPU it was allowed, not the machine, capped throughput", t.GOMAXPROCS, t.Cores),
		Evidence: []string{
			fmt.Sprintf("at %s the trace shows %.2f of %d Ps busy on average over %v", l.Label, t.BusyPs, t.GOMAXPROCS, t.Span.Round(time.Millisecond)),
			fmt.Sprintf("the target may use %g cores (its CPU affinity, or the machine it shares with apiperf)", t.Cores),
			fmt.Sprintf("runnable goroutines waited for a P: p50 %v, p99 %v (request p99 %v)", t.SchedP50, t.SchedP99, l.P99),
		},
		Fix: fmt.Sprintf("set GOMAXPROCS=%g (or remove the override: Go 1.25+ sets it from the container's CPU limit, and older Go from the machine's cores; in a container on an older Go, go.uber.org/automaxprocs reads the cgroup quota)", t.Cores),
	}
	if t.SchedP99 > 0 && l.P99 > 0 && float64(t.SchedP99) >= SchedShareOfP99*float64(l.P99) {
		c.Confidence = High
	}
	return c
}

// schedClaim: goroutines waited for a P for a large share of the request latency.
func schedClaim(l Level, t *Trace) *Claim {
	if t.SchedP99 <= 0 || l.P99 <= 0 || float64(t.SchedP99) < SchedShareOfP99*float64(l.P99) {
		return nil
	}
	share := 100 * float64(t.SchedP99) / float64(l.P99)
	procs := "?"
	if t.GOMAXPROCS > 0 {
		procs = fmt.Sprint(t.GOMAXPROCS)
	}
	c := &Claim{Kind: SchedLatency, Confidence: Medium,
		Summary: fmt.Sprintf("the target's goroutines waited for a CPU: scheduler latency p99 %v is %.0f%% of the request p99 %v", t.SchedP99, share, l.P99),
		Evidence: []string{
			fmt.Sprintf("at %s runnable goroutines waited p50 %v, p99 %v before running", l.Label, t.SchedP50, t.SchedP99),
			fmt.Sprintf("GOMAXPROCS %s, %.2f Ps busy on average", procs, t.BusyPs),
		},
		Fix: "give the target more CPU (cores, or GOMAXPROCS up to them), spend less CPU per request (see the CPU profile's top), or bound the work in flight inside the target so fewer goroutines compete",
	}
	if share >= 50 {
		c.Confidence = High
	}
	return c
}

// gcClaim: GC pauses or mark assist are a large part of the tail, or GC takes a large
// share of the CPU.
func gcClaim(l Level, t *Trace) *Claim {
	stwTail := l.P99 > 0 && float64(t.STWMax) >= STWShareOfP99*float64(l.P99)
	assist := t.AssistPct >= AssistPctMin
	heavy := t.GCCPUPct >= GCCPUPctMin
	if !stwTail && !assist && !heavy {
		return nil
	}
	ev := []string{fmt.Sprintf("at %s: %.1f GC cycles per second, GC %.0f%% of the time goroutines ran (mark assist %.0f%%)", l.Label, t.GCPerSecond, t.GCCPUPct, t.AssistPct)}
	var what string
	switch {
	case stwTail:
		what = fmt.Sprintf("a GC stop-the-world pause of %v is %.0f%% of the request p99 %v", t.STWMax, 100*float64(t.STWMax)/float64(l.P99), l.P99)
	case assist:
		what = fmt.Sprintf("goroutines spent %.0f%% of their run time in GC mark assist instead of serving requests", t.AssistPct)
	default:
		what = fmt.Sprintf("GC took %.0f%% of the time goroutines ran", t.GCCPUPct)
	}
	ev = append(ev, fmt.Sprintf("stop-the-world: %v in total over %v, longest %v", t.STWTotal, t.Span.Round(time.Millisecond), t.STWMax))
	fix := "raise GOGC (e.g. GOGC=200 or 400: fewer cycles for more heap) or set GOMEMLIMIT to the memory the target may use and GOGC higher"
	if t.AssistSite != "" {
		ev = append(ev, "most mark assist was drafted in "+t.AssistSite)
		fix += "; allocate less in " + t.AssistSite + " (reuse buffers, sync.Pool, fewer pointers)"
	} else {
		fix += "; allocate less per request (see the heap profile's alloc_space)"
	}
	c := &Claim{Kind: GCTail, Confidence: Medium, Summary: "garbage collection makes the tail: " + what, Evidence: ev, Fix: fix}
	if stwTail && float64(t.STWMax) >= 0.5*float64(l.P99) || t.AssistPct >= 2*AssistPctMin {
		c.Confidence = High
	}
	return c
}
