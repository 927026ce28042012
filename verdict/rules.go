package verdict

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Thresholds of the rules.
const (
	// cpuSaturated: a process using this share of the cores it may use is at its cores.
	cpuSaturated = 0.85
	// cpuIdle: a target below this share of its cores is not CPU-bound.
	cpuIdle = 0.6
	// starvedShare: a process (the target or apiperf) that used at least this share of its
	// cores, and used and waited for a CPU cpuSaturated of them together, wanted its cores
	// and was kept off them by other work on the machine. Below it, the wait is the short
	// wake-ups of a mostly idle process, which also queue on a busy machine.
	starvedShare = 0.25
	// busyShare: a generator using this share of its cores is busy itself, so its late
	// wake-ups and sends are its own doing, not only other work's.
	busyShare = 0.5
	// machineSaturated: generator and target together on one machine at this share of it.
	machineSaturated = 0.9
	// schedSlowPct: over this share of goroutine wake-ups waiting > 1 ms, the generator is
	// starved (high, because a busy shared machine delays some wake-ups anyway).
	schedSlowPct = 25.0
	// lateSharePct: open loop with more than this share of sends late is behind its schedule.
	lateSharePct = 1.0
	// plateauQPS: an open-loop level completing less than this share of its rate is saturated.
	plateauQPS = 0.9
	// plateauNear and plateauGain: a closed-loop plateau starts at a level within plateauNear
	// of the peak QPS after which QPS never grew past plateauGain times its own.
	plateauNear, plateauGain = 0.75, 1.2
	// plateauLoad: the plateau must span this much more load to count as flat throughput.
	plateauLoad = 1.5
	// latencyGrowth: mean latency must grow this much across the plateau for "waiting".
	latencyGrowth = 1.5
	// errorStartPct: a level with more failed attempts than this share is where errors start.
	errorStartPct = 1.0
	// littleLow and littleHigh bound a consistent closed-loop Little's law ratio.
	littleLow, littleHigh = 0.8, 1.2
	// contended: a block or mutex site is evidence when at least this many goroutines
	// waited there on average (below it, the server's own short waits).
	contended = 0.5
)

// plateau is where throughput stopped following load: levels From..To.
type plateau struct {
	ok       bool
	from, to int
}

// saturation finds the plateau. Closed loop: from the first level near the peak after which
// QPS grew no more than plateauGain times while load grew plateauLoad times, to the last
// level. Open loop: from the first level whose QPS fell short of its rate by more than
// 1-plateauQPS.
func saturation(in Input) plateau {
	n := len(in.Levels)
	if in.Peak < 0 || in.Peak >= n || n < 2 {
		return plateau{}
	}
	peak := in.Levels[in.Peak].QPS
	if in.Levels[0].Open {
		for i, l := range in.Levels {
			if l.Load > 0 && l.QPS < plateauQPS*l.Load {
				return plateau{ok: true, from: max(0, min(i, in.Peak)), to: n - 1}
			}
		}
		return plateau{}
	}
	for i, l := range in.Levels[:n-1] {
		if l.QPS < plateauNear*peak || in.Levels[n-1].Load < plateauLoad*l.Load {
			continue
		}
		best := 0.0
		for _, m := range in.Levels[i+1:] {
			best = max(best, m.QPS)
		}
		if best <= plateauGain*l.QPS {
			return plateau{ok: true, from: i, to: n - 1}
		}
	}
	return plateau{}
}

func (p plateau) evidence(in Input) string {
	a, b := in.Levels[p.from], in.Levels[p.to]
	if a.Open {
		return fmt.Sprintf("at %s the target completed %s req/s of %s asked", a.Label, num(a.QPS), num(a.Load))
	}
	return fmt.Sprintf("throughput stopped growing from %s to %s: %s -> %s req/s (%+.0f%%) while load rose %.1fx",
		a.Label, b.Label, num(a.QPS), num(b.QPS), 100*(b.QPS/a.QPS-1), b.Load/a.Load)
}

// little checks Little's law on every level.
func little(in Input) []LittleCheck {
	var out []LittleCheck
	for _, l := range in.Levels {
		c := LittleCheck{Label: l.Label, Load: l.Load, InFlight: l.inFlight(), OK: true}
		switch {
		case l.QPS == 0 || l.Mean == 0:
			c.Note = "no responses"
		case l.Open:
			c.Note = fmt.Sprintf("%.1f requests in flight on average", c.InFlight)
		default:
			c.Ratio = c.InFlight / l.Load
			if c.Ratio < littleLow || c.Ratio > littleHigh {
				c.OK = false
				c.Note = fmt.Sprintf("QPS x mean latency = %.1f in flight, not the %s connections", c.InFlight, num(l.Load))
				if c.Ratio < littleLow {
					c.Note += ": connections sat idle between requests (generator slow to send, connects, or errors)"
				}
			}
		}
		out = append(out, c)
	}
	return out
}

// generatorClaim: apiperf's CPU at its cores (used, or used and waited for), its scheduler
// starved, or the open-loop schedule falling behind, at the peak or beyond.
func generatorClaim(in Input, sat plateau, v *Verdict) *Claim {
	if in.Peak < 0 || in.Peak >= len(in.Levels) {
		return nil
	}
	var ev, notes []string
	defer func() {
		if len(notes) > 0 {
			v.Silent = append(v.Silent, "generator: "+notes[0])
		}
	}()
	conf := Low
	at := ""
	raise := func(c Confidence) {
		if rank(c) > rank(conf) {
			conf = c
		}
	}
	for _, l := range in.Levels[in.Peak:] {
		found := false
		if pct := l.brokenPct(); !l.Open && pct >= errorStartPct {
			// A closed loop replaces a failed connection at once: it spends whatever CPU it
			// gets on failures, which says nothing of the target's numbers (errors do).
			notes = append(notes, fmt.Sprintf("not judged at %s, where %.1f%% of attempts lost their connection (a closed loop reconnects at once and uses whatever CPU it gets)", l.Label, pct))
			continue
		}
		if g := l.Generator; g != nil {
			// At its cores: what it used, or what it used and waited for on a busy machine
			// (CPU time alone understates a generator that other processes kept off its core).
			switch {
			case g.Cores > 0 && g.CPUCores >= cpuSaturated*g.Cores:
				ev = append(ev, fmt.Sprintf("at %s apiperf used %.2f of its %g cores", l.Label, g.CPUCores, g.Cores))
				raise(High)
				found = true
			case starved(g, g.Cores):
				ev = append(ev, fmt.Sprintf("at %s %s", l.Label, g.starvation("apiperf", g.Cores)))
				raise(High)
				found = true
			}
			// Late wake-ups count only when apiperf was busy itself: on a machine full of
			// other work they delay every process, and the target's latency dwarfs them.
			if g.SchedSlowPct > schedSlowPct && (g.Cores == 0 || g.CPUCores >= busyShare*g.Cores) {
				ev = append(ev, fmt.Sprintf("at %s %.0f%% of apiperf's goroutine wake-ups waited over 1 ms to run", l.Label, g.SchedSlowPct))
				raise(Medium)
				found = true
			}
		}
		if l.Open && l.Scheduled > 0 && 100*float64(l.LateSends)/float64(l.Scheduled) > lateSharePct {
			late := fmt.Sprintf("at %s %.1f%% of requests were sent late (worst %v after due)",
				l.Label, 100*float64(l.LateSends)/float64(l.Scheduled), l.MaxLag.Round(time.Microsecond))
			if g := l.Generator; g != nil && g.Cores > 0 && g.CPUCores < busyShare*g.Cores {
				// apiperf was not busy: other processes, or a target holding every
				// connection, delayed the sends. The corrected latency includes the delay.
				notes = append(notes, late+", while apiperf used only "+fmt.Sprintf("%.2f of its %g cores", g.CPUCores, g.Cores)+
					": the machine or the target delayed them (corrected latency includes it)")
			} else {
				ev = append(ev, late)
				raise(Medium)
				found = true
			}
		}
		if found && at == "" {
			at = l.Label
		}
	}
	if len(ev) == 0 {
		return nil
	}
	if pk := in.Levels[in.Peak]; pk.Generator != nil && pk.Target != nil && in.SameMachine && in.MachineCores > 0 {
		ev = append(ev, fmt.Sprintf("apiperf and the target share %d cores: %.2f and %.2f at the peak",
			in.MachineCores, pk.Generator.CPUCores, pk.Target.CPUCores))
	}
	return &Claim{
		Kind: GeneratorBound, Confidence: conf, Level: at,
		Summary:  "apiperf itself was short of CPU, so the numbers understate the target",
		Evidence: ev,
		Fix:      "run apiperf on another machine than the target, give it more --threads if it has idle cores, or spread the load over workers",
	}
}

// cpuClaim: the target's CPU at its cores at the peak, with its top functions and GC share.
func cpuClaim(in Input, sat plateau, v *Verdict) *Claim {
	if in.Peak < 0 || in.Peak >= len(in.Levels) {
		return nil
	}
	pk := in.Levels[in.Peak]
	t := pk.Target
	if t == nil || t.CPUCores == 0 {
		v.Silent = append(v.Silent, "target CPU: not measured (give --target-pid PID, or --metrics for a Go target)")
		if runningShare(in, sat) < 0.5 {
			return nil
		}
		t = &Usage{} // the goroutine profile alone may still show CPU demand
	}
	cores := t.Cores
	if cores == 0 {
		cores = float64(in.MachineCores)
	}
	var ev []string
	conf := Low
	switch {
	case cores > 0 && t.CPUCores >= cpuSaturated*cores:
		ev = append(ev, fmt.Sprintf("target CPU %.2f of %g cores at %s (the peak, %s req/s)", t.CPUCores, cores, pk.Label, num(pk.QPS)))
		conf = Medium
	case in.SameMachine && in.MachineCores > 0 && pk.Generator != nil &&
		t.CPUCores+pk.Generator.CPUCores >= machineSaturated*float64(in.MachineCores) &&
		t.CPUCores >= 0.5*float64(in.MachineCores):
		ev = append(ev, fmt.Sprintf("the machine's %d cores were full at %s (the peak): the target used %.2f, apiperf %.2f",
			in.MachineCores, pk.Label, t.CPUCores, pk.Generator.CPUCores))
		conf = Medium
	case starved(t, cores):
		ev = append(ev, fmt.Sprintf("at %s (the peak) %s on a busy machine", pk.Label, t.starvation("the target", cores)))
		conf = Medium
	case sat.ok && runningShare(in, sat) >= 0.5:
		p := runningProfile(in, sat)
		ev = append(ev, fmt.Sprintf("%s of %s busy goroutines were running or waiting to run in %s: they want CPU, not a resource",
			num(float64(p.Waits[0].Count)), num(float64(p.Goroutines)), p.Waits[0].Site))
		conf = Low
	default:
		return nil
	}
	if sat.ok {
		ev = append(ev, sat.evidence(in))
		if conf == Low {
			conf = Medium
		} else {
			conf = High
		}
	} else {
		ev = append(ev, "throughput was still rising at the last level: the plateau is not measured")
	}
	// The peak's profile, else the nearest one after it: the same CPU-bound code runs there.
	p := pk.Profile
	for i := in.Peak + 1; p == nil && i < len(in.Levels); i++ {
		p = in.Levels[i].Profile
	}
	if p != nil {
		if len(p.TopCum) > 0 {
			ev = append(ev, "top cumulative CPU: "+functions(p.TopCum, 5))
		}
		if p.GCPct > 0 || p.AllocPct > 0 {
			ev = append(ev, fmt.Sprintf("GC %.1f%% and allocation %.1f%% of the target's CPU", p.GCPct, p.AllocPct))
		}
	} else {
		v.Silent = append(v.Silent, "target CPU profile: not captured at or after the peak (give --pprof to name the hot functions)")
	}
	sum := fmt.Sprintf("the target is CPU-bound: %.2f cores busy at %s req/s", t.CPUCores, num(pk.QPS))
	if t.CPUCores == 0 {
		sum = fmt.Sprintf("the target is CPU-bound: its goroutines want more CPU than they get at %s req/s", num(pk.QPS))
	}
	return &Claim{
		Kind: TargetCPU, Confidence: conf, Level: pk.Label,
		Summary:  sum,
		Evidence: ev,
		Fix:      "make the top functions cheaper (less work, fewer allocations if GC is high), or give the target more cores",
	}
}

// waitingClaim: throughput flat while latency grows and the target's CPU is not saturated.
func waitingClaim(in Input, sat plateau, generatorBound bool, v *Verdict) *Claim {
	if !sat.ok {
		return nil
	}
	a, b := in.Levels[sat.from], in.Levels[sat.to]
	if a.Mean == 0 || float64(b.Mean) < latencyGrowth*float64(a.Mean) {
		return nil
	}
	if generatorBound {
		v.Silent = append(v.Silent, "target waiting: not judged, the generator was short of CPU")
		return nil
	}
	pk := in.Levels[in.Peak]
	ev := []string{sat.evidence(in), fmt.Sprintf("mean latency %v -> %v, p99 %v -> %v; in flight (QPS x mean) %.1f -> %.1f",
		dur(a.Mean), dur(b.Mean), dur(a.P99), dur(b.P99), a.inFlight(), b.inFlight())}
	conf := Low
	if t := pk.Target; t != nil && t.CPUCores > 0 {
		cores := t.Cores
		if cores == 0 {
			cores = float64(in.MachineCores)
		}
		if cores > 0 && (t.CPUCores >= cpuIdle*cores || starved(t, cores)) {
			return nil // busy (or starved of CPU) enough that the CPU may be the limit
		}
		if in.SameMachine && in.MachineCores > 0 && pk.Generator != nil &&
			t.CPUCores+pk.Generator.CPUCores >= machineSaturated*float64(in.MachineCores) {
			return nil // the machine is full: not off-CPU
		}
		ev = append(ev, fmt.Sprintf("target CPU only %.2f of %g cores at %s", t.CPUCores, cores, pk.Label))
		conf = Medium
	}
	var waits *Profile
	for i := sat.to; i >= sat.from; i-- {
		if p := in.Levels[i].Profile; p != nil && len(p.Waits) > 0 {
			waits = p
			break
		}
	}
	if runningShare(in, sat) >= 0.5 {
		return nil // most busy goroutines run or wait to run: CPU, not a resource
	}
	site := ""
	if waits != nil {
		for i, w := range waits.Waits[:min(3, len(waits.Waits))] {
			ev = append(ev, fmt.Sprintf("%s of %s busy goroutines wait in %s", num(float64(w.Count)), num(float64(waits.Goroutines)), w.Site))
			if i == 0 {
				site = w.Site
			}
		}
	} else {
		v.Silent = append(v.Silent, "wait sites: no goroutine profile on the plateau (give --pprof to name where the target waits)")
	}
	cev, csite := contention(in, sat)
	ev = append(ev, cev...)
	if site == "" {
		site = csite
	}
	if conf == Medium && site != "" {
		conf = High // the CPU is idle and the wait sites name what it waits for
	}
	if conf == Low && site == "" {
		v.Silent = append(v.Silent, "target waiting: throughput flat and latency growing, but the target's CPU is unknown")
		return nil
	}
	sum := "the target waits off-CPU (a lock, a pool, I/O or a downstream call): throughput is flat and latency grows"
	if site != "" {
		sum += "; most busy goroutines wait in " + site
	}
	return &Claim{
		Kind: TargetWaiting, Confidence: conf, Level: a.Label, Summary: sum, Evidence: ev,
		Fix: "widen or remove what the goroutines wait for (pool size, lock scope, downstream concurrency), or cache its answers",
	}
}

// growthClaim: goroutines or heap that grow within every level and never come back.
func growthClaim(in Input, v *Verdict) *Claim {
	var gor, heap []Level
	for _, l := range in.Levels {
		if t := l.Target; t != nil && t.Goroutines > 0 {
			gor = append(gor, l)
		}
		if t := l.Target; t != nil && t.HeapBytes > 0 {
			heap = append(heap, l)
		}
	}
	var ev []string
	conf := Low
	if grows(gor, func(u *Usage) float64 { return u.Goroutines }, func(u *Usage) float64 { return u.GoroutineRise }, 10, 2) {
		ev = append(ev, fmt.Sprintf("goroutines grew within every level and never came back: %s", series(gor, func(u *Usage) string {
			return num(u.Goroutines)
		})))
		conf = High
	}
	if grows(heap, func(u *Usage) float64 { return u.HeapBytes }, func(u *Usage) float64 { return u.HeapRise }, 4<<20, 0) {
		ev = append(ev, fmt.Sprintf("heap in use grew within every level: %s MiB", series(heap, func(u *Usage) string {
			return fmt.Sprintf("%.0f", u.HeapBytes/(1<<20))
		})))
		if conf == Low {
			conf = Medium
		}
	}
	if len(gor) < 2 && len(heap) < 2 {
		v.Silent = append(v.Silent, "growth: goroutines and heap not measured per level (give --metrics for a Go target)")
	}
	if len(ev) == 0 {
		return nil
	}
	for i := len(in.Levels) - 1; i >= 0; i-- {
		p := in.Levels[i].Profile
		if p == nil {
			continue
		}
		if len(p.Waits) > 0 {
			ev = append(ev, fmt.Sprintf("at %s %s of %s busy goroutines wait in %s", in.Levels[i].Label,
				num(float64(p.Waits[0].Count)), num(float64(p.Goroutines)), p.Waits[0].Site))
		}
		if len(p.Inuse) > 0 {
			ev = append(ev, "live heap by site: "+functions(p.Inuse, 3))
		}
		break
	}
	return &Claim{
		Kind: Growth, Confidence: conf, Level: in.Levels[0].Label,
		Summary:  "a leak: the target keeps goroutines or memory it never releases",
		Evidence: ev,
		Fix:      "find what the named sites start or keep and make sure it ends (a context, a close, a bounded cache)",
	}
}

// grows reports whether every level rose by at least minRise within it and the value never
// fell back below the previous level's. For goroutines (perInFlight > 0) the rise must also
// exceed perInFlight per request in flight: a server's goroutines follow its connections
// while a level ramps up, and only what rises past them is kept.
func grows(ls []Level, val, rise func(*Usage) float64, minRise, perInFlight float64) bool {
	if len(ls) < 2 {
		return false
	}
	for i, l := range ls {
		inFlight := l.inFlight()
		if !l.Open {
			inFlight = max(inFlight, l.Load)
		}
		if rise(l.Target) < minRise+perInFlight*inFlight {
			return false
		}
		if i > 0 && val(l.Target) <= val(ls[i-1].Target) {
			return false
		}
	}
	return true
}

// errorsClaim: the first level where errors pass errorStartPct, and their class.
func errorsClaim(in Input) *Claim {
	for i, l := range in.Levels {
		pct := l.errorPct()
		if pct < errorStartPct {
			continue
		}
		e := l.Errors
		classes := []struct {
			name string
			n    int64
			why  string
		}{
			{"connect", e.Connect, "connections refused or reset as they opened: a connection limit, listen backlog or file-descriptor limit on one side"},
			{"read", e.Read, "connections reset or closed before the response: a connection limit, listen backlog, file-descriptor or keep-alive limit on one side"},
			{"write", e.Write, "connections reset while sending: a connection limit, listen backlog, file-descriptor or keep-alive limit on one side"},
			{"timeout", e.Timeout, "requests outlived the timeout: the target is saturated and requests queue"},
			{"status", e.Status, "the target answered with unexpected status codes"},
			{"protocol", e.Protocol, "responses that are not valid HTTP"},
		}
		slices.SortStableFunc(classes, func(a, b struct {
			name string
			n    int64
			why  string
		}) int {
			return int(b.n - a.n)
		})
		top := classes[0]
		ev := []string{fmt.Sprintf("at %s %.1f%% of %s attempts failed: %s", l.Label, pct, num(float64(l.Attempts)), e.String())}
		if i > 0 {
			p := in.Levels[i-1]
			ev = append(ev, fmt.Sprintf("at %s before it: %.2f%%", p.Label, p.errorPct()))
		}
		if top.name == "status" && len(l.Status) > 0 {
			ev = append(ev, "status codes: "+statuses(l.Status))
		}
		if last := in.Levels[len(in.Levels)-1]; i < len(in.Levels)-1 {
			ev = append(ev, fmt.Sprintf("at %s (last): %.1f%%", last.Label, last.errorPct()))
		}
		return &Claim{
			Kind: ErrorsStart, Confidence: High, Level: l.Label,
			Summary:  fmt.Sprintf("errors start at %s, mostly %s: %s", l.Label, top.name, top.why),
			Evidence: ev,
			Fix:      errorFix(top.name),
		}
	}
	return nil
}

func errorFix(class string) string {
	switch class {
	case "connect", "read", "write":
		return "raise the connection limit (the target's or its proxy's), the listen backlog (somaxconn) and the open-file limits (ulimit -n) on both sides, and reuse connections"
	case "timeout":
		return "the target is past its capacity here: see the other claims for what limits it, or raise --timeout if the latency is acceptable"
	case "status":
		return "read the target's logs for the failing responses"
	}
	return "capture a failing response (a Lua response() hook) to see what the target sent"
}

func rank(c Confidence) int {
	switch c {
	case High:
		return 3
	case Medium:
		return 2
	}
	return 1
}

func functions(fs []Function, n int) string {
	var parts []string
	for _, f := range fs[:min(n, len(fs))] {
		parts = append(parts, fmt.Sprintf("%s %.0f%%", f.Name, f.Pct))
	}
	return strings.Join(parts, ", ")
}

func series(ls []Level, f func(*Usage) string) string {
	var parts []string
	for _, l := range ls {
		parts = append(parts, l.Label+" "+f(l.Target))
	}
	return strings.Join(parts, ", ")
}

func statuses(m map[int]int64) string {
	codes := make([]int, 0, len(m))
	for c := range m {
		if c < 200 || c >= 400 {
			codes = append(codes, c)
		}
	}
	slices.Sort(codes)
	var parts []string
	for _, c := range codes {
		parts = append(parts, fmt.Sprintf("%d x%d", c, m[c]))
	}
	return strings.Join(parts, ", ")
}

// num formats a count or rate with thousands separators, e.g. 4,812 or 1,234.5.
func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Sprint(v)
	}
	neg := v < 0
	v = math.Abs(v)
	s := fmt.Sprintf("%.0f", v)
	if v < 100 && v != math.Trunc(v) {
		s = fmt.Sprintf("%.1f", v)
	}
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, r := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if frac != "" {
		b.WriteString("." + frac)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func dur(d time.Duration) string {
	switch {
	case d >= 10*time.Millisecond:
		return d.Round(time.Millisecond).String()
	case d >= 100*time.Microsecond:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}

// contention is the evidence of the block and mutex profiles on the plateau's latest level
// that has them: their top sites where goroutines waited (at least contended on average),
// and the block profile's top site. Nothing when the target did not enable them.
func contention(in Input, sat plateau) (ev []string, site string) {
	for i := sat.to; i >= sat.from; i-- {
		p := in.Levels[i].Profile
		if p == nil || len(p.Block) == 0 && len(p.Mutex) == 0 {
			continue
		}
		for _, c := range p.Block[:min(2, len(p.Block))] {
			if c.Waiting < contended {
				break
			}
			ev = append(ev, fmt.Sprintf("block profile at %s: %s goroutines on average blocked in %s (%.0f%% of the time blocked, %s waits)",
				in.Levels[i].Label, num(c.Waiting), c.Site, c.Pct, num(float64(c.Events))))
			if site == "" {
				site = c.Site
			}
		}
		for _, c := range p.Mutex[:min(2, len(p.Mutex))] {
			if c.Waiting < contended {
				break
			}
			ev = append(ev, fmt.Sprintf("mutex profile at %s: the lock released in %s kept %s goroutines waiting on average (%.0f%% of the lock contention)",
				in.Levels[i].Label, c.Site, num(c.Waiting), c.Pct))
		}
		return ev, site
	}
	return nil, ""
}

// starved reports whether a process that may use cores wanted them on a busy machine: it
// used at least starvedShare of them, and what it used and what its threads waited for a
// CPU together reach cpuSaturated of them.
func starved(u *Usage, cores float64) bool {
	return cores > 0 && u.CPUCores >= starvedShare*cores && u.CPUCores+u.RunWaitCores >= cpuSaturated*cores
}

// starvation is the evidence of starved, e.g. "the target used 0.50 cores and its threads
// waited 1.30 s per second for a CPU: it wanted 1.80 of its 2 cores".
func (u *Usage) starvation(who string, cores float64) string {
	return fmt.Sprintf("%s used %.2f cores and its threads waited %.2f s per second for a CPU: it wanted %.2f of its %g cores",
		who, u.CPUCores, u.RunWaitCores, u.CPUCores+u.RunWaitCores, cores)
}

// runningProfile is the latest profile on the plateau with wait sites, or nil.
func runningProfile(in Input, sat plateau) *Profile {
	for i := sat.to; i >= sat.from; i-- {
		if p := in.Levels[i].Profile; p != nil && len(p.Waits) > 0 && p.Goroutines > 0 {
			return p
		}
	}
	return nil
}

// runningShare is the share of busy goroutines at the top wait site when that site is
// "running" (on CPU or runnable), on the plateau's latest goroutine profile; 0 otherwise.
func runningShare(in Input, sat plateau) float64 {
	if !sat.ok {
		return 0
	}
	p := runningProfile(in, sat)
	if p == nil || p.Waits[0].Reason != "running" {
		return 0
	}
	return float64(p.Waits[0].Count) / float64(p.Goroutines)
}
