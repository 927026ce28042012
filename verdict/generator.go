package verdict

import (
	"fmt"
)

// GeneratorBound says apiperf itself was short of CPU: the numbers understate the target.
const GeneratorBound Kind = "generator-bound"

// generatorClaim: apiperf's CPU at its cores (used, or used and waited for), its scheduler
// starved, or the open-loop schedule falling behind, at the peak or beyond. On a machine
// other processes shared, apiperf short of CPU may be their doing: not high.
func generatorClaim(j *judgement) *Claim {
	in, t := j.in, j.t
	if j.peak() == nil {
		return nil
	}
	var ev, notes []string
	defer func() {
		if len(notes) > 0 {
			j.silent("generator: " + notes[0])
		}
	}()
	conf := Low
	at := -1
	starvedOnly := true // every high finding is a wait for a CPU, which others may have caused
	merged := false     // the merged generator (all workers, or the one machine) was short
	var short []string  // scaled out: the workers short of CPU at the first level found
	var shortOf int
	raise := func(c Confidence) {
		if rank(c) > rank(conf) {
			conf = c
		}
	}
	for i := in.Peak; i < len(in.Levels); i++ {
		l := in.Levels[i]
		found := false
		if pct := l.brokenPct(); !l.Open && pct >= t.ErrorStartPct {
			// A closed loop replaces a failed connection at once: it spends whatever CPU it
			// gets on failures, which says nothing of the target's numbers (errors do).
			notes = append(notes, fmt.Sprintf("not judged at %s, where %.1f%% of attempts lost their connection (a closed loop reconnects at once and uses whatever CPU it gets)", l.Label, pct))
			continue
		}
		if g := l.Generator; g != nil {
			// At its cores: what it used, or what it used and waited for on a busy machine
			// (CPU time alone understates a generator that other processes kept off its core).
			switch {
			case g.Cores > 0 && g.CPUCores >= t.CPUSaturated*g.Cores:
				ev = append(ev, fmt.Sprintf("at %s apiperf used %.2f of its %g cores", l.Label, g.CPUCores, g.Cores))
				raise(High)
				starvedOnly = false
				found = true
			case j.starved(g, g.Cores):
				ev = append(ev, fmt.Sprintf("at %s %s", l.Label, g.starvation("apiperf", g.Cores)))
				raise(High)
				found = true
			}
			// Late wake-ups count only when apiperf was busy itself: on a machine full of
			// other work they delay every process, and the target's latency dwarfs them.
			if g.SchedSlowPct > t.SchedSlowPct && (g.Cores == 0 || g.CPUCores >= t.BusyShare*g.Cores) {
				ev = append(ev, fmt.Sprintf("at %s %.0f%% of apiperf's goroutine wake-ups waited over 1 ms to run", l.Label, g.SchedSlowPct))
				raise(Medium)
				found = true
			}
		}
		merged = merged || found
		if wev, names, shared := j.workersShort(l); len(wev) > 0 {
			ev = append(ev, wev...)
			if shared { // other processes on those machines may be what kept them off their cores
				raise(Medium)
			} else {
				raise(High)
			}
			starvedOnly, found = false, true // each worker's own machine was measured
			if short == nil {
				short, shortOf = names, len(l.Workers)
			}
		}
		if l.Open && l.Scheduled > 0 && 100*float64(l.LateSends)/float64(l.Scheduled) > t.LateSharePct {
			late := fmt.Sprintf("at %s %.1f%% of requests were sent late (worst %s after due)",
				l.Label, 100*float64(l.LateSends)/float64(l.Scheduled), dur(l.MaxLag))
			if g := l.Generator; g != nil && g.Cores > 0 && g.CPUCores < t.BusyShare*g.Cores {
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
		if found && at < 0 {
			at = i
		}
	}
	if len(ev) == 0 {
		return nil
	}
	sum := "apiperf itself was short of CPU, so the numbers understate the target"
	if short != nil && !merged {
		sum = fmt.Sprintf("apiperf was short of CPU on %s, so the numbers understate the target", ofWorkers(short, shortOf))
	}
	if pk := in.Levels[in.Peak]; pk.Generator != nil && pk.Target != nil && in.SameMachine && in.MachineCores > 0 {
		ev = append(ev, fmt.Sprintf("apiperf and the target share %d cores: %.2f and %.2f at the peak",
			in.MachineCores, pk.Generator.CPUCores, pk.Target.CPUCores))
	}
	if c := j.shared(at, len(in.Levels)-1); c != nil {
		ev = append(ev, sharedNote(c))
		sum = fmt.Sprintf("apiperf was short of CPU on a machine shared with other processes (%.2f cores at %s), so the numbers understate the target", c.Others+c.Steal, c.Label)
		conf = lower(conf, Medium)
	} else if j.machineAt(at) == nil && starvedOnly && conf == High {
		ev = append(ev, "not measured: the machine's CPU, so other processes may be what kept apiperf off its cores")
		conf = Medium
	}
	return &Claim{
		Kind: GeneratorBound, Confidence: conf, Level: in.Levels[at].Label,
		Summary:  sum,
		Evidence: ev,
		Fix:      "run apiperf on another machine than the target or stop what else runs on this one, give it more --threads if it has idle cores, or spread the load over workers",
	}
}
