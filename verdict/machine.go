package verdict

import "fmt"

// Machine is the whole machine's CPU during a level (/proc/stat on the machine apiperf ran
// on), in cores: what every process and the kernel used, and what a hypervisor stole.
type Machine struct {
	CPUs  int     `json:"cpus"`
	Busy  float64 `json:"busy_cores"`
	Steal float64 `json:"steal_cores,omitempty"`
	// Downstreams is what the processes at the other end of the target's connections used,
	// when they run on this machine (a database, a cache): part of Busy, not "other processes".
	Downstreams float64 `json:"downstreams_cores,omitempty"`
}

// MachineCheck is the machine's CPU during one level by who used it, in cores.
type MachineCheck struct {
	Label   string  `json:"label"`
	CPUs    int     `json:"cpus"`
	Busy    float64 `json:"busy"`
	Apiperf float64 `json:"apiperf"`
	// Target is the target's CPU when it ran on this machine and was measured.
	Target float64 `json:"target,omitempty"`
	// Downstreams is what the target's downstreams on this machine used (its database).
	Downstreams float64 `json:"downstreams,omitempty"`
	// Others is what everyone else used: Busy less apiperf, the target and its downstreams.
	// When the target is on this machine and its CPU unknown (TargetUnknown), Others
	// includes it.
	Others        float64 `json:"others"`
	TargetUnknown bool    `json:"target_unknown,omitempty"`
	Steal         float64 `json:"steal,omitempty"`
	// Shared: other processes or a hypervisor took at least Thresholds.OthersCores.
	Shared bool `json:"shared,omitempty"`
	// Full: the machine's CPUs were busy at Thresholds.MachineSaturated or more.
	Full bool `json:"full,omitempty"`
}

// String is the check in words, e.g. "2.0 of 2 cores busy: apiperf 0.41, the target 0.55,
// other processes 1.02".
func (m MachineCheck) String() string {
	s := fmt.Sprintf("%.1f of %d cores busy: apiperf %.2f", m.Busy, m.CPUs, m.Apiperf)
	switch {
	case m.TargetUnknown:
		s += fmt.Sprintf(", the target and other processes %.2f (the target's own CPU not measured)", m.Others)
	case m.Target > 0:
		s += fmt.Sprintf(", the target %.2f, other processes %.2f", m.Target, m.Others)
	default:
		s += fmt.Sprintf(", other processes %.2f", m.Others)
	}
	if m.Downstreams >= 0.005 {
		s += fmt.Sprintf(" (the target's downstreams on this machine %.2f apart)", m.Downstreams)
	}
	if m.Steal > 0.005 {
		s += fmt.Sprintf("; %.2f stolen by the hypervisor", m.Steal)
	}
	return s
}

// machineAt is level i's machine use by who used it; nil when the machine was not measured.
func (j *judgement) machineAt(i int) *MachineCheck {
	if i < 0 || i >= len(j.in.Levels) {
		return nil
	}
	l := j.in.Levels[i]
	m := l.Machine
	if m == nil || m.CPUs <= 0 {
		return nil
	}
	c := &MachineCheck{Label: l.Label, CPUs: m.CPUs, Busy: m.Busy, Steal: m.Steal}
	if l.Generator != nil {
		c.Apiperf = l.Generator.CPUCores
	}
	c.Downstreams = m.Downstreams
	c.Others = m.Busy - c.Apiperf - c.Downstreams
	if j.in.SameMachine {
		if l.Target != nil && l.Target.CPUCores > 0 {
			c.Target = l.Target.CPUCores
			c.Others -= c.Target
		} else {
			c.TargetUnknown = true
		}
	}
	c.Others = max(c.Others, 0)
	c.Shared = !c.TargetUnknown && c.Others >= j.t.OthersCores || c.Steal >= j.t.OthersCores
	c.Full = m.Busy+m.Steal >= j.t.MachineSaturated*float64(m.CPUs)
	return c
}

// downstreamsHeld reports whether the machine was full and the target's downstreams on it
// (its database, say) used at least half of its cores, more than every other process: the
// CPU the target's requests waited for was their downstream's work.
func (m *MachineCheck) downstreamsHeld() bool {
	return m != nil && m.Full && m.Downstreams >= 0.5*float64(m.CPUs) && m.Downstreams > m.Others+m.Steal
}

// machine lists the levels' machine checks.
func (j *judgement) machine() []MachineCheck {
	var out []MachineCheck
	for i := range j.in.Levels {
		if c := j.machineAt(i); c != nil {
			out = append(out, *c)
		}
	}
	return out
}

// shared is the first level from..to (inclusive) where others took CPU, or nil.
func (j *judgement) shared(from, to int) *MachineCheck {
	for i := max(from, 0); i <= to && i < len(j.in.Levels); i++ {
		if c := j.machineAt(i); c != nil && c.Shared {
			return c
		}
	}
	return nil
}

// sharedNote is the evidence that the machine was shared at c's level.
func sharedNote(c *MachineCheck) string {
	return fmt.Sprintf("the machine was shared at %s: %s", c.Label, c)
}

// starved reports whether a process that may use cores wanted them on a busy machine: it
// used at least StarvedShare of them, and what it used and what its threads waited for a
// CPU together reach CPUSaturated of them.
func (j *judgement) starved(u *Usage, cores float64) bool {
	return cores > 0 && u.CPUCores >= j.t.StarvedShare*cores && u.CPUCores+u.RunWaitCores >= j.t.CPUSaturated*cores
}

// starvation is the evidence of starved, e.g. "the target used 0.50 cores and its threads
// waited 1.30 s per second for a CPU: it wanted 1.80 of its 2 cores".
func (u *Usage) starvation(who string, cores float64) string {
	return fmt.Sprintf("%s used %.2f cores and its threads waited %.2f s per second for a CPU: it wanted %.2f of its %g cores",
		who, u.CPUCores, u.RunWaitCores, u.CPUCores+u.RunWaitCores, cores)
}

// targetCores is the cores the target may use: its own figure, else the machine's.
func (j *judgement) targetCores(t *Usage) float64 {
	if t != nil && t.Cores > 0 {
		return t.Cores
	}
	return float64(j.in.MachineCores)
}
