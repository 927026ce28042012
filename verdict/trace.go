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
	// STWStopping is the pauses' time stopping the world (waiting for threads to be on a CPU
	// to stop), STWWorkMax the longest collector's part of one; both 0 in older records.
	STWStopping time.Duration `json:"stw_stopping_ns,omitempty"`
	STWWorkMax  time.Duration `json:"stw_work_max_ns,omitempty"`
	// GCCPUPct and AssistPct are GC's and mark assist's shares of the time goroutines ran;
	// Assist is the time goroutines spent in mark assist.
	GCCPUPct  float64       `json:"gc_cpu_pct"`
	AssistPct float64       `json:"assist_pct"`
	Assist    time.Duration `json:"assist_ns,omitempty"`
	// AssistSite is where goroutines were drafted into mark assist most: the allocating code.
	AssistSite string `json:"assist_site,omitempty"`
	// Span is how long the trace lasted.
	Span time.Duration `json:"span_ns"`
}

// Thresholds of the trace claims.
const (
	// BusyShare: Ps busy this share of the time or more are full.
	BusyShare = 0.85
	// MinBusyShare: the tail claims (scheduler latency, GC) are made only at levels where the
	// target's Ps were busy this share of the time or more: a target idle most of the time is
	// limited by nothing, and its sub-millisecond tail is the machine's jitter.
	MinBusyShare = 0.5
	// SchedShareOfP99: scheduler p99 at this share of the request p99 or more is a claim.
	SchedShareOfP99 = 0.25
	// STWShareOfP99: a GC pause at this share of the request p99 or more makes the tail,
	// when the pauses cover STWShareOfTime of the time or more (enough to touch 1% of requests).
	STWShareOfP99  = 0.25
	STWShareOfTime = 0.01
	// STWRunWaitConfounds: with the target's threads waiting this many seconds per second
	// for a CPU, a pause's length is not the collector's alone: a long pause is no more than
	// medium evidence.
	STWRunWaitConfounds = 0.25
	// AssistShareOfMean: mark assist per request at this share of the mean latency or more.
	AssistShareOfMean = 0.10
	// GCCPUPctMin: GC taking this share of goroutine run time or more, with the Ps full.
	GCCPUPctMin = 30.0
)

// traceClaims are the trace's claims, each at the first traced level where it shows; v
// holds the claims made so far (a CPU-bound target's scheduler latency is its CPU claim's).
func traceClaims(in Input, v *Verdict) []Claim {
	var out []Claim
	procs := firstClaim(in, gomaxprocsClaim)
	switch {
	case procs != nil:
		out = append(out, *procs) // it says the scheduler latency too
	case !v.Has(TargetCPU):
		if c := firstClaim(in, schedClaim); c != nil {
			out = append(out, *c)
		}
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
			fmt.Sprintf("at %s the trace shows %.2f of %d Ps busy on average over %v", l.Label, t.BusyPs, t.GOMAXPROCS, dur(t.Span)),
			fmt.Sprintf("the target may use %g cores (its CPU affinity, or the machine it shares with apiperf)", t.Cores),
			fmt.Sprintf("runnable goroutines waited for a P: p50 %s, p99 %s (request p99 %s)", dur(t.SchedP50), dur(t.SchedP99), dur(l.P99)),
		},
		Fix: fmt.Sprintf("set GOMAXPROCS=%g (or remove the override: Go 1.25+ sets it from the container's CPU limit, and older Go from the machine's cores; in a container on an older Go, go.uber.org/automaxprocs reads the cgroup quota)", t.Cores),
	}
	if t.SchedP99 > 0 && l.P99 > 0 && float64(t.SchedP99) >= SchedShareOfP99*float64(l.P99) {
		c.Confidence = High
	}
	// The cores counted are the machine's, and apiperf and other processes ran on it too:
	// only what they left free is CPU more Ps could have used here (a P counts as busy
	// while its thread waits for a CPU).
	var gen, others float64
	if g := l.Generator; g != nil {
		gen = g.CPUCores
	}
	if m := l.Machine; m != nil && m.CPUs > 0 && l.Target != nil && l.Target.CPUCores > 0 {
		others = max(0, m.Busy+m.Steal-gen-l.Target.CPUCores-m.Downstreams)
	}
	if (gen > 0 || others > 0) && t.Cores-gen-others < float64(t.GOMAXPROCS)+0.5 {
		c.Confidence = Low
		c.Evidence = append(c.Evidence, fmt.Sprintf("but apiperf used %.2f and other processes %.2f of the %g cores: here more Ps would have waited for a CPU; the claim is about the target's own machine", gen, others, t.Cores))
	}
	return c
}

// schedClaim: goroutines waited for a P for a large share of the request latency.
// With its Ps under half busy (MinBusyShare) the target had CPU time to spare: its
// goroutines waited because the machine's CPUs were taken (other processes, apiperf; the
// conditions say so) or for the OS to wake a thread: no claim.
func schedClaim(l Level, t *Trace) *Claim {
	if t.SchedP99 <= 0 || l.P99 <= 0 || float64(t.SchedP99) < SchedShareOfP99*float64(l.P99) {
		return nil
	}
	if t.GOMAXPROCS > 0 && t.BusyPs < MinBusyShare*float64(t.GOMAXPROCS) {
		return nil
	}
	share := 100 * float64(t.SchedP99) / float64(l.P99)
	procs := "?"
	if t.GOMAXPROCS > 0 {
		procs = fmt.Sprint(t.GOMAXPROCS)
	}
	c := &Claim{Kind: SchedLatency, Confidence: Medium,
		Summary: fmt.Sprintf("the target's goroutines waited for a CPU: scheduler latency p99 %s is %.0f%% of the request p99 %s", dur(t.SchedP99), share, dur(l.P99)),
		Evidence: []string{
			fmt.Sprintf("at %s runnable goroutines waited p50 %s, p99 %s before running", l.Label, dur(t.SchedP50), dur(t.SchedP99)),
			fmt.Sprintf("GOMAXPROCS %s, %.2f Ps busy on average", procs, t.BusyPs),
		},
		Fix: "give the target more CPU (cores, or GOMAXPROCS up to them), spend less CPU per request (see the CPU profile's top), or bound the work in flight inside the target so fewer goroutines compete",
	}
	if share >= 50 {
		c.Confidence = High
	}
	return c
}

// gcClaim: GC pauses long and frequent enough to set the p99, mark assist taking a large
// part of each request's time, or GC taking a large share of CPU the target had no more of.
func gcClaim(l Level, t *Trace) *Claim {
	if t.GOMAXPROCS > 0 && t.BusyPs < MinBusyShare*float64(t.GOMAXPROCS) {
		return nil // a target idle most of the time (MinBusyShare)
	}
	// The collector's part of the pauses, not the wait for the threads to stop (a CPU); a
	// pause longer than the p99 caught fewer than 1% of the requests: not the p99's maker.
	work, workMax := t.STWTotal-t.STWStopping, t.STWWorkMax
	if workMax == 0 && t.STWStopping == 0 {
		workMax = t.STWMax // a record from before the split
	}
	stwTail := l.P99 > 0 && float64(workMax) >= STWShareOfP99*float64(l.P99) && workMax <= l.P99 &&
		float64(work) >= STWShareOfTime*float64(t.Span)
	var assistPerReq time.Duration
	if reqs := l.QPS * t.Span.Seconds(); reqs >= 1 {
		assistPerReq = time.Duration(float64(t.Assist) / reqs)
	}
	assist := l.Mean > 0 && float64(assistPerReq) >= AssistShareOfMean*float64(l.Mean)
	heavy := t.GCCPUPct >= GCCPUPctMin && t.GOMAXPROCS > 0 && t.BusyPs >= BusyShare*float64(t.GOMAXPROCS)
	if !stwTail && !assist && !heavy {
		return nil
	}
	ev := []string{fmt.Sprintf("at %s: %.1f GC cycles per second, GC %.0f%% of the time goroutines ran (mark assist %.0f%%)", l.Label, t.GCPerSecond, t.GCCPUPct, t.AssistPct)}
	var what string
	switch {
	case stwTail:
		what = fmt.Sprintf("GC stop-the-world pauses with up to %s of the collector's work, %.0f%% of the request p99 %s, stopped the target %.1f%% of the time", dur(workMax), 100*float64(workMax)/float64(l.P99), dur(l.P99), 100*float64(work)/float64(t.Span))
	case assist:
		what = fmt.Sprintf("mark assist took %s per request, %.0f%% of the mean latency %s", dur(assistPerReq), 100*float64(assistPerReq)/float64(l.Mean), dur(l.Mean))
	default:
		what = fmt.Sprintf("GC took %.0f%% of the time goroutines ran while the target's %.2f Ps were full", t.GCCPUPct, t.BusyPs)
	}
	ev = append(ev, fmt.Sprintf("stop-the-world: %s in total over %s, longest %s", dur(t.STWTotal), dur(t.Span), dur(t.STWMax)))
	if t.STWStopping > 0 {
		ev = append(ev, fmt.Sprintf("of which %s stopping the world (threads waiting for a CPU to stop on), not the collector's work", dur(t.STWStopping)))
	}
	fix := "raise GOGC (e.g. GOGC=200 or 400: fewer cycles for more heap) or set GOMEMLIMIT to the memory the target may use and GOGC higher"
	if t.AssistSite != "" {
		ev = append(ev, "most mark assist was drafted in "+t.AssistSite)
	}
	// The allocation site is where the bytes were allocated (the heap profile's), attributed
	// to the application's frame; the assist's site is only where a goroutine happened to
	// pay for everyone's allocation.
	if p := l.Profile; p != nil && p.AllocPlace != "" {
		ev = append(ev, "bytes allocated (alloc_space) mostly below "+p.AllocPlace)
		fix += "; allocate less below " + p.AllocPlace + " (reuse buffers, sync.Pool, fewer pointers)"
	} else if t.AssistSite != "" {
		fix += "; allocate less in " + t.AssistSite + " (reuse buffers, sync.Pool, fewer pointers)"
	} else {
		fix += "; allocate less per request (see the heap profile's alloc_space)"
	}
	c := &Claim{Kind: GCTail, Confidence: Medium, Summary: "garbage collection makes the tail: " + what, Evidence: ev, Fix: fix}
	longPause := stwTail && float64(workMax) >= 0.5*float64(l.P99)
	if longPause || assist && float64(assistPerReq) >= 2*AssistShareOfMean*float64(l.Mean) {
		c.Confidence = High
	}
	// A pause lasts until the collector's thread has had its CPU time: when the target's
	// threads queued for a CPU (a busy machine), a pause's "work" holds that wait too, and
	// the pause's length is not the collector's alone.
	if u := l.Target; longPause && u != nil && u.RunWaitCores >= STWRunWaitConfounds {
		c.Evidence = append(c.Evidence, fmt.Sprintf("but the target's threads waited %.2f s per second for a CPU at %s: part of each pause may be that wait, not the collector's work", u.RunWaitCores, l.Label))
		if c.Confidence == High && !(assist && float64(assistPerReq) >= 2*AssistShareOfMean*float64(l.Mean)) {
			c.Confidence = Medium
		}
	}
	return c
}
