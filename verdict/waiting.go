package verdict

import (
	"fmt"
	"strings"
)

// TargetWaiting says throughput was flat and latency growing while the target's CPU was
// idle: its requests waited off-CPU (a lock, a pool, I/O, a downstream call).
const TargetWaiting Kind = "target-waiting"

// waitingClaim: throughput flat while latency grows and the target's CPU is not saturated.
// High only when what would make it another claim was measured: the target's CPU and its
// run-queue wait (not CPU-bound, not starved), the machine's CPU (not shared with other
// processes), and the place the requests wait.
func waitingClaim(j *judgement) *Claim {
	in, th, sat := j.in, j.t, j.sat
	if !sat.ok {
		return nil
	}
	a, b := in.Levels[sat.from], in.Levels[sat.to]
	if a.Mean == 0 || float64(b.Mean) < th.LatencyGrowth*float64(a.Mean) {
		return nil
	}
	gen := j.v.Claim(GeneratorBound)
	if gen != nil && gen.Confidence == High {
		j.silent("target waiting: not judged, the generator was short of CPU")
		return nil
	}
	pk := j.peak()
	ev := []string{sat.evidence(in), fmt.Sprintf("mean latency %v -> %v, p99 %v -> %v; in flight (QPS x mean) %.1f -> %.1f",
		dur(a.Mean), dur(b.Mean), dur(a.P99), dur(b.P99), a.inFlight(), b.inFlight())}
	var missing []string
	conf := Low
	if t := pk.Target; t != nil && t.CPUCores > 0 {
		cores := j.targetCores(t)
		if cores > 0 && (t.CPUCores >= th.CPUIdle*cores || j.starved(t, cores)) {
			return nil // busy (or starved of CPU) enough that the CPU may be the limit
		}
		if in.SameMachine && in.MachineCores > 0 && pk.Generator != nil &&
			t.CPUCores+pk.Generator.CPUCores >= th.MachineSaturated*float64(in.MachineCores) {
			return nil // the machine is full: not off-CPU
		}
		ev = append(ev, fmt.Sprintf("target CPU only %.2f of %g cores at %s", t.CPUCores, cores, pk.Label))
		conf = Medium
		if in.SameMachine && t.RunWaitCores == 0 {
			missing = append(missing, "the target's wait for a CPU (give --target-pid when apiperf cannot find the target's process)")
		}
	} else {
		missing = append(missing, "the target's CPU (give --target-pid, or --metrics for a Go target)")
	}
	// Other processes on apiperf's machine take CPU from the target only when it runs there.
	m := j.machineAt(in.Peak)
	if !in.SameMachine {
		m = &MachineCheck{}
	}
	full := m != nil && m.Full
	if m == nil {
		missing = append(missing, "the machine's CPU (other processes')")
	}
	// The machine full of the target's own downstreams' work: requests that wait to run
	// wait for a CPU their downstream holds, and the downstream is the place.
	held := in.SameMachine && m.downstreamsHeld()
	if _, sh, _ := j.running(); sh >= 0.5 && !held {
		return nil // most request goroutines run or wait to run: CPU, not a resource
	}
	site, reason := "", ""
	p, at := j.waitProfile()
	if p != nil && held && !in.Levels[at].Open && float64(p.Goroutines) < 0.25*in.Levels[at].Load {
		ev = append(ev, fmt.Sprintf("only %s request goroutines at %s for %s connections: the other requests waited to be read, for a CPU the downstreams held",
			num(float64(p.Goroutines)), in.Levels[at].Label, num(in.Levels[at].Load)))
	} else if p != nil && !in.Levels[at].Open && float64(p.Goroutines) < 0.25*in.Levels[at].Load {
		// Few requests were inside the target: they did not queue there.
		missing = append(missing, fmt.Sprintf("requests queued in the target (%s request goroutines at %s for %s connections)",
			num(float64(p.Goroutines)), in.Levels[at].Label, num(in.Levels[at].Load)))
		p = nil
	}
	if p != nil {
		for i, w := range p.Waits[:min(3, len(p.Waits))] {
			line := p.waitLine(w)
			ev = append(ev, line)
			// On a full machine only a wait that needs no CPU names the place: parked in a
			// pool, a lock, a channel or a sleep (I/O may be slow for want of a CPU too).
			if i == 0 && float64(w.Count) >= th.WaitShare*float64(p.Goroutines) && !wantsCPU(w.Reason) && (!full || w.Reason != "I/O") {
				site = line
				reason = w.Reason
			}
		}
		// The machine full of the downstreams' own work: requests parked in a lock or a pool
		// queue behind those waiting for the downstream's answer (the lock's holders wait for
		// a CPU it holds), so the downstream names the place whatever its share.
		if w := p.topDownstream(); held && w != nil && reason != "downstream" {
			site = p.waitLine(*w)
			reason = w.Reason
		}
	} else if at < 0 {
		j.silent("wait sites: " + j.noWaitProfile())
	}
	cev, csite := j.contention()
	ev = append(ev, cev...)
	if site == "" && csite != "" {
		site = "the block profile names " + csite
	}
	if gen != nil && site == "" {
		j.silent("target waiting: not judged, the generator was short of CPU (flat throughput may be its) and no place where the requests wait was seen")
		return nil
	}
	if full && site == "" {
		j.silent(fmt.Sprintf("target waiting: not judged, the machine's CPUs were full at %s (%s) and no place where the requests were parked was seen: they may have waited for a CPU", pk.Label, m))
		return nil
	}
	if site == "" {
		missing = append(missing, "where the requests wait (no wait site holds a fair share of them)")
	}
	if sat.weak {
		missing = append(missing, "a level where throughput stopped (it rose unevenly)")
	}
	if gen != nil {
		missing = append(missing, "a generator with the CPU it wanted (generator-bound, "+string(gen.Confidence)+")")
	}
	if conf == Medium && len(missing) == 0 {
		conf = High // the CPU is idle, nothing else took it, and the wait sites name what it waits for
	}
	if conf == Low && site == "" {
		j.silent("target waiting: throughput flat and latency growing, but the target's CPU is unknown")
		return nil
	}
	sum := "the target waits off-CPU (a lock, a pool, I/O or a downstream call): throughput is flat and latency grows"
	if reason == "downstream" {
		sum = "the target waits for a downstream's answer: throughput is flat and latency grows"
	}
	if site != "" {
		sum += "; " + site
	}
	if held {
		ev = append(ev, fmt.Sprintf("the machine's CPUs were full at %s (%s), %.2f of its %d cores used by the target's downstreams on this machine: the requests waited for their work, and for a CPU they held",
			pk.Label, m, m.Downstreams, m.CPUs))
		sum += fmt.Sprintf("; the target's downstreams on this machine used %.2f of the machine's %d full cores (the target %.2f), so the wait is their work", m.Downstreams, m.CPUs, m.Target)
		conf = lower(conf, Medium)
	} else if full {
		ev = append(ev, fmt.Sprintf("the machine's CPUs were full at %s (%s), but the requests were parked where a CPU does not help", pk.Label, m))
		sum += fmt.Sprintf("; the machine's CPUs were full (other processes %.2f cores), so the latency also holds waits for a CPU", m.Others+m.Steal)
		conf = lower(conf, Medium)
	} else if c := j.shared(sat.from, sat.to); c != nil && in.SameMachine {
		ev = append(ev, sharedNote(c))
		sum += fmt.Sprintf("; other processes took %.2f cores at %s, so part of the wait may be for a CPU", c.Others+c.Steal, c.Label)
		conf = lower(conf, Medium)
	}
	if conf != High && len(missing) > 0 {
		ev = append(ev, fmt.Sprintf("confidence %s: not measured: %s", conf, strings.Join(missing, "; ")))
	}
	return &Claim{
		Kind: TargetWaiting, Confidence: conf, Level: a.Label, Summary: sum, Evidence: ev,
		Fix: waitFix(reason),
	}
}

// waitFix is what a person would do about a wait of the reason named.
func waitFix(reason string) string {
	if reason == "downstream" {
		return "make the downstream answer sooner or ask it less: the query it runs (EXPLAIN it, add an index), " +
			"fewer calls per request (batch them), or cache its answers in the target"
	}
	return "widen or remove what the goroutines wait for (pool size, lock scope, downstream concurrency), or cache its answers"
}

// waitProfile is the plateau's latest profile with wait sites and its level, or nil, -1.
func (j *judgement) waitProfile() (*Profile, int) {
	for i := j.sat.to; i >= j.sat.from; i-- {
		if p := j.in.Levels[i].Profile; p != nil && len(p.Waits) > 0 {
			return p, i
		}
	}
	return nil, -1
}

// noWaitProfile says why no level of the plateau has a goroutine profile's wait sites: none
// was captured there (no --pprof, or kept at other levels), or the one captured showed no
// request goroutine waiting.
func (j *judgement) noWaitProfile() string {
	kept := ""
	for i := j.sat.to; i >= j.sat.from; i-- {
		if p := j.in.Levels[i].Profile; p != nil && p.Goroutines > 0 {
			kept = fmt.Sprintf("the goroutine profile at %s shows %s request goroutines and none waiting", j.in.Levels[i].Label, num(float64(p.Goroutines)))
			break
		} else if p != nil && kept == "" {
			kept = fmt.Sprintf("the profiles at %s have no goroutine profile (the run's warnings say why it was not captured)", j.in.Levels[i].Label)
		}
	}
	if kept != "" {
		return kept
	}
	for _, l := range j.in.Levels {
		if l.Profile != nil {
			return fmt.Sprintf("no goroutine profile on the plateau (%s to %s); profiles were kept at other levels", j.in.Levels[j.sat.from].Label, j.in.Levels[j.sat.to].Label)
		}
	}
	return "no goroutine profile on the plateau (give --pprof to name where the target waits)"
}

// contention is the evidence of the block and mutex profiles on the plateau's latest level
// that has them: their top sites where goroutines waited (at least Contended on average),
// and the block profile's top site. Nothing when the target did not enable them.
func (j *judgement) contention() (ev []string, site string) {
	for i := j.sat.to; i >= j.sat.from; i-- {
		p := j.in.Levels[i].Profile
		if p == nil || len(p.Block) == 0 && len(p.Mutex) == 0 {
			continue
		}
		label := j.in.Levels[i].Label
		for _, c := range p.Block[:min(2, len(p.Block))] {
			if c.Waiting < j.t.Contended {
				break
			}
			ev = append(ev, fmt.Sprintf("block profile at %s: %s goroutines on average blocked in %s (%.0f%% of the time blocked, %s waits)",
				label, num(c.Waiting), c.Site, c.Pct, num(float64(c.Events))))
			if site == "" {
				site = c.Site
			}
		}
		for _, c := range p.Mutex[:min(2, len(p.Mutex))] {
			if c.Waiting < j.t.Contended {
				break
			}
			ev = append(ev, fmt.Sprintf("mutex profile at %s: the lock released in %s kept %s goroutines waiting on average (%.0f%% of the lock contention)",
				label, c.Site, num(c.Waiting), c.Pct))
		}
		return ev, site
	}
	return nil, ""
}
