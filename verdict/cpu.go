package verdict

import (
	"fmt"
	"strings"
)

// TargetCPU says the target's CPU was at its cores at the peak.
const TargetCPU Kind = "target-cpu-bound"

// cpuClaim: the target's CPU at its cores at the peak (used, or used and waited for, or
// the machine full with the target among its users), with where its CPU time goes.
func cpuClaim(j *judgement) *Claim {
	in, th := j.in, j.t
	pk := j.peak()
	if pk == nil {
		return nil
	}
	t := pk.Target
	if t == nil || t.CPUCores == 0 {
		why := ""
		if in.TargetProcess != "" {
			why = "; " + in.TargetProcess
		}
		j.silent("target CPU: not measured (give --target-pid PID, or --metrics for a Go target" + why + ")")
		if _, sh, _ := j.running(); sh < 0.5 {
			return nil
		}
		t = &Usage{} // the goroutine profile alone may still show CPU demand
	}
	cores := j.targetCores(t)
	m := j.machineAt(in.Peak)
	runAt, runShareAt, runSiteAt := j.runningAt(in.Peak)
	runP, runShare, runSite := j.running()
	// Where most attempts lost their connection a closed loop reconnects at once: the
	// target's CPU goes to that churn, and the machine is full of it; only a target at its
	// own cores is judged there.
	churn := !pk.Open && pk.brokenPct() >= th.ErrorStartPct
	// A machine full of the target's downstreams' work (its database's): requests that
	// want a CPU want one the downstream holds; the target short of CPU is judged only when
	// it used a fair share of its cores.
	held := in.SameMachine && m.downstreamsHeld() && t.CPUCores < th.StarvedShare*cores
	var ev []string
	conf := Low
	capped := "" // why the confidence stays below high
	sum := fmt.Sprintf("the target is CPU-bound: %.2f cores busy at %s req/s", t.CPUCores, num(pk.QPS))
	switch {
	case cores > 0 && t.CPUCores >= th.CPUSaturated*cores:
		ev = append(ev, fmt.Sprintf("target CPU %.2f of %g cores at %s (the peak, %s req/s)", t.CPUCores, cores, pk.Label, num(pk.QPS)))
		conf = Medium
	case churn:
		j.silent(fmt.Sprintf("target short of CPU: not judged at %s, where %.1f%% of attempts lost their connection (the CPU went to reconnecting)", pk.Label, pk.brokenPct()))
		return nil
	case in.SameMachine && m != nil && m.Full && t.CPUCores >= th.StarvedShare*cores:
		// The target used a fair share of its cores and nothing was left to give it more.
		ev = append(ev, fmt.Sprintf("the machine's cores were full at %s (the peak): %s", pk.Label, m))
		conf = Medium
		if m.Shared {
			sum = fmt.Sprintf("the target is short of CPU: the machine's %d cores were full, %.2f of them taken by other processes", m.CPUs, m.Others+m.Steal)
		}
		switch {
		case j.starved(t, cores):
			ev = append(ev, t.starvation("the target", cores))
		case t.RunWaitCores == 0:
			capped = "not measured: the target's wait for a CPU, which would show it wanted more (give --target-pid)"
		default:
			capped = fmt.Sprintf("the target's threads waited only %.2f s per second for a CPU: it may not have wanted more", t.RunWaitCores)
		}
	case in.SameMachine && in.MachineCores > 0 && pk.Generator != nil &&
		t.CPUCores+pk.Generator.CPUCores >= th.MachineSaturated*float64(in.MachineCores) &&
		t.CPUCores >= 0.5*float64(in.MachineCores):
		ev = append(ev, fmt.Sprintf("the machine's %d cores were full at %s (the peak): the target used %.2f, apiperf %.2f",
			in.MachineCores, pk.Label, t.CPUCores, pk.Generator.CPUCores))
		conf = Medium
	case j.starved(t, cores):
		ev = append(ev, fmt.Sprintf("at %s (the peak) %s on a busy machine", pk.Label, t.starvation("the target", cores)))
		conf = Medium
		if in.SameMachine && m != nil && m.Shared {
			sum = fmt.Sprintf("the target is short of CPU: other processes took %.2f cores at %s", m.Others+m.Steal, pk.Label)
		}
	case held && (runShareAt >= 0.5 || runShare >= 0.5):
		j.silent(fmt.Sprintf("target short of CPU: not judged at %s, where the target used %.2f cores and its downstreams on this machine %.2f of the %d full cores: its requests waited for them",
			pk.Label, t.CPUCores, m.Downstreams, m.CPUs))
		return nil
	case in.SameMachine && m != nil && (m.Shared || m.Full) && runShareAt >= 0.5 && j.limited():
		// Few cores for the target, and its requests want CPU: others took it.
		ev = append(ev, fmt.Sprintf("%.0f%% of %s request goroutines were running, runnable or held up by the garbage collector (most in %s): they want CPU, not a resource",
			100*runShareAt, num(float64(runAt.Goroutines)), runSiteAt.Site), sharedNote(m))
		if t.RunWaitCores > 0 {
			ev = append(ev, t.starvation("the target", cores))
		}
		sum = fmt.Sprintf("the target is short of CPU: its requests want CPU and other processes took %.2f cores", m.Others+m.Steal)
		conf = Low
	case j.sat.ok && runShare >= 0.5:
		ev = append(ev, fmt.Sprintf("%.0f%% of %s request goroutines were running, runnable or held up by the garbage collector (most in %s): they want CPU, not a resource",
			100*runShare, num(float64(runP.Goroutines)), runSite.Site))
		conf = Low
	default:
		return nil
	}
	if j.sat.ok {
		ev = append(ev, j.sat.evidence(in))
		if j.sat.weak {
			capped = "throughput rose unevenly, with no level where it stopped"
		}
		if conf == Low {
			conf = Medium
		} else {
			conf = High
		}
	} else {
		ev = append(ev, "throughput was still rising at the last level: the plateau is not measured")
	}
	if in.SameMachine && m != nil && m.Shared && !m.Full {
		ev = append(ev, sharedNote(m))
	}
	if capped != "" && conf == High {
		conf = Medium
		ev = append(ev, "confidence medium: "+capped)
	}
	// The peak's profile, else the nearest one after it: the same CPU-bound code runs there.
	p := pk.Profile
	for i := in.Peak + 1; p == nil && i < len(in.Levels); i++ {
		p = in.Levels[i].Profile
	}
	if p != nil {
		ev = append(ev, p.hotEvidence()...)
		if p.GCPct > 0 || p.AllocPct > 0 {
			ev = append(ev, fmt.Sprintf("GC %.1f%% and allocation %.1f%% of the target's CPU", p.GCPct, p.AllocPct))
		}
		if p.AllocPlace != "" {
			ev = append(ev, "bytes allocated (alloc_space) mostly below "+p.AllocPlace)
		}
		sum += p.placeSummary(th)
	} else {
		j.silent("target CPU profile: not captured at or after the peak (give --pprof to name the hot functions)")
	}
	if t.CPUCores == 0 {
		sum = fmt.Sprintf("the target is CPU-bound: its goroutines want more CPU than they get at %s req/s", num(pk.QPS))
	}
	return &Claim{
		Kind: TargetCPU, Confidence: conf, Level: pk.Label,
		Summary:  sum,
		Evidence: ev,
		Fix:      "make the hot functions cheaper (less work, fewer allocations if GC is high), or give the target more cores (or the machine, if others use it)",
	}
}

// placeSummary names where a person would change the code: the application frame most of
// the CPU is below and the library it is spent in; beside it, when GC and allocation take a
// large share, the frame that allocates the most bytes. For a profile without places, the
// hottest function the requests reach (the end of the path), never a runtime helper.
func (p *Profile) placeSummary(th Thresholds) string {
	var sum string
	if p.HotPlace != "" && (p.HotPlacePct == 0 || p.HotPlacePct >= th.PlaceSharePct) {
		sum = "; most of its CPU is below " + p.HotPlace
	} else if pkg := hotLibrary(p.HotPackages); pkg != nil {
		// Most of the CPU in goroutines of a library's own (no application frame on their
		// stacks): the library by its self time, the application's place beside it.
		sum = fmt.Sprintf("; most of its CPU is in %s (%.0f%% self)", pkg.Name, pkg.Pct)
		if p.HotPlace != "" {
			sum += ", called below " + p.HotPlace
		}
	} else {
		leaf := p.HotPath
		if i := strings.LastIndex(leaf, " -> "); i >= 0 {
			leaf = leaf[i+len(" -> "):]
		}
		for _, f := range p.Hot {
			if !runtimeHelper(f.Name) && (f.Name == leaf || p.HotPath == "") {
				sum = fmt.Sprintf("; the hottest function is %s (%.0f%% self)", f.Name, f.Pct)
				break
			}
		}
	}
	if p.AllocPlace != "" && p.GCPct+p.AllocPct >= th.GCHeavyPct {
		sum += fmt.Sprintf("; GC and allocation take %.0f%% of it, the bytes allocated mostly below %s", p.GCPct+p.AllocPct, p.AllocPlace)
	}
	return sum
}

// hotLibrary is the package with the most self time that is neither the runtime's nor the
// runtime's assembly helpers; nil when none.
func hotLibrary(pkgs []Function) *Function {
	for i, f := range pkgs {
		if !runtimeHelper(f.Name+".") && f.Name != "runtime" && !strings.HasPrefix(f.Name, "gcWriteBarrier") {
			return &pkgs[i]
		}
	}
	return nil
}

// runtimeHelper: a function of the runtime or its internals, never the place to change.
func runtimeHelper(fn string) bool {
	for _, pre := range []string{"runtime.", "internal/", "syscall.", "sync/atomic."} {
		if strings.HasPrefix(fn, pre) {
			return true
		}
	}
	return false
}

// limited reports whether the target did not keep up with the load: throughput stopped
// (a plateau, or an open loop short of its rate), or a closed loop's mean latency grew
// LatencyGrowth times from the first level to the last. A healthy target, whose few
// requests happen to be running when the profile is taken, is neither.
func (j *judgement) limited() bool {
	if j.sat.ok {
		return true
	}
	ls := j.in.Levels
	if len(ls) < 2 || ls[0].Open || ls[0].Mean <= 0 {
		return false
	}
	return float64(ls[len(ls)-1].Mean) >= j.t.LatencyGrowth*float64(ls[0].Mean)
}

// hotEvidence names where the CPU time goes: self time by function and by package, and
// the path from the request's handler to the hottest function; the cumulative table
// (wrappers left out) for a profile from before these were kept.
func (p *Profile) hotEvidence() []string {
	var ev []string
	if len(p.Hot) > 0 {
		ev = append(ev, "CPU by function (self time, wrappers every request passes through left out): "+functions(p.Hot, 5))
		if len(p.HotPackages) > 0 {
			ev = append(ev, "CPU by package: "+functions(p.HotPackages, 4))
		}
		if p.HotPath != "" {
			ev = append(ev, "path to the hottest function: "+p.HotPath)
		}
	} else if len(p.TopCum) > 0 {
		ev = append(ev, "top cumulative CPU: "+functions(p.TopCum, 5))
	}
	return ev
}
