package cluster

import (
	"context"
	"fmt"
	"math"
	"net/netip"
	"strings"

	"github.com/apiperf/apiperf/conditions"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
	"github.com/apiperf/apiperf/sweep"
)

// Health is one worker's own conditions during one step: its machine as the conditions
// package records it for a local run, its own use of the CPU, and what held its share back.
// A merged result from many workers can hide one sick generator; this names it.
type Health struct {
	Worker int `json:"worker"` // from 1
	// Conditions is the worker's machine during the step (others' CPU, steal, its own CPU
	// and run-queue wait); nil when not sent (an older worker, or /proc not readable).
	Conditions *conditions.StepSample `json:"conditions,omitempty"`
	// Generator is the worker's own use of its cores (load's usage); nil when not measured.
	Generator *measure.Generator `json:"generator,omitempty"`
	// Limit is the limit of the worker's machine its step hit (ports, files); nil: none.
	Limit *measure.GeneratorLimit `json:"generator_limit,omitempty"`
	// Asked is the connections of its share (open loop: the pool limit); Opened how many it
	// opened: those open when a limit was hit, else those it counted, at most Asked.
	Asked  int            `json:"connections"`
	Opened int            `json:"opened"`
	Errors measure.Errors `json:"errors"`
}

// Limited says the worker hit a limit of its machine: its share is the generator's ceiling.
func (h Health) Limited() bool { return h.Limit != nil }

// Bound says the worker was short of CPU (measure.Generator.Bound): its share may
// understate the target.
func (h Health) Bound() bool { return h.Generator.Bound() }

// Mark is what the workers table says of the worker: "generator-limited",
// "generator-bound", or "" when neither.
func (h Health) Mark() string {
	switch {
	case h.Limited():
		return "generator-limited"
	case h.Bound():
		return "generator-bound"
	}
	return ""
}

// Reason says why the worker is marked, e.g. "generator-limited: open files of apiperf's
// process ran out at 12 of 20 connections (EMFILE); fix: ..."; "" when it is not.
func (h Health) Reason() string {
	switch {
	case h.Limited():
		g := h.Limit
		return fmt.Sprintf("generator-limited: %s ran out at %d of %d connections (%s); fix: %s", g.Resource, g.Connections, g.Wanted, g.Errno, g.Fix)
	case h.Bound():
		g := h.Generator
		s := fmt.Sprintf("generator-bound: it used %.2f of its %g cores and its threads waited %.2f s per second for a CPU", g.CPUCores(), g.Cores, g.RunWaitCores())
		if c := h.Conditions; c != nil && (c.Others >= conditions.DefaultThresholds.OthersCores || c.StealPct > conditions.DefaultThresholds.StealPct) {
			s += fmt.Sprintf("; other processes took %.2f cores of its machine, steal %.1f%%", c.Others, c.StealPct)
		}
		return s
	}
	return ""
}

// StepHealth is every worker's health during one measured step.
type StepHealth struct {
	Label   string   `json:"label"`
	Rep     int      `json:"rep,omitempty"`
	Workers []Health `json:"workers"`
}

// Name is the step as tables name it: "c=50" or "c=50 #2".
func (s StepHealth) Name() string {
	return conditions.StepSample{Label: s.Label, Rep: s.Rep}.Name()
}

// health is member m's health in the last step.
func (m *member) health() Health {
	h := Health{Worker: m.index + 1, Asked: m.share.Conns()}
	if m.cond != nil && len(m.cond.Steps) == 1 {
		st := m.cond.Steps[0]
		h.Conditions = &st
	}
	s := m.step
	if s == nil {
		for _, iv := range m.intervals {
			h.Errors.Add(iv.Errors)
		}
		return h
	}
	h.Errors, h.Generator, h.Limit = s.Errors, s.Generator, s.GeneratorLimit
	switch {
	case s.GeneratorLimit != nil:
		h.Opened = s.GeneratorLimit.Connections
	case s.Connects > 0:
		h.Opened = int(min(s.Connects, int64(h.Asked)))
	default: // no limit hit, and the driver does not count its dials: all of them
		h.Opened = h.Asked
	}
	return h
}

// Hook is a sweep.Hook that keeps, for every measured step the coordinator ran, each
// worker's health under the step's label (warmups are not kept): Record's Steps.
func (c *Coordinator) Hook(_ context.Context, info sweep.StepInfo) func(*measure.Step) {
	return func(s *measure.Step) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if s == nil || info.Warmup || c.last == nil {
			return
		}
		c.steps = append(c.steps, StepHealth{Label: info.Label, Rep: info.Rep, Workers: c.last})
	}
}

// keepHealth records every member's health in the last step, for Hook and Workers.
func (c *Coordinator) keepHealth() {
	hs := make([]Health, 0, len(c.members))
	for _, m := range c.members {
		hs = append(hs, m.health())
	}
	c.mu.Lock()
	c.last = hs
	c.mu.Unlock()
}

// healthWarnings name, beside the merged numbers, each worker of the last step that was
// generator-limited or generator-bound, with why: the merged figures alone would hide it.
func (c *Coordinator) healthWarnings() []string {
	c.mu.Lock()
	last := c.last
	c.mu.Unlock()
	var out []string
	for _, h := range last {
		if why := h.Reason(); why != "" && h.Worker-1 < len(c.members) {
			m := c.members[h.Worker-1]
			out = append(out, fmt.Sprintf("worker %d (%s, %s) was %s", h.Worker, m.host, m.addr, why))
		}
	}
	return out
}

// newWorkerConditions starts the record of a worker's conditions for plan p; the function
// it returns ends it with the step (nil: failed) and gives the record to send: its machine,
// and the step's conditions when they could be read.
func newWorkerConditions(p *Plan, apiperf string) func(*measure.Step) *conditions.Record {
	sess := conditions.NewSession(conditions.ReadGenerator(apiperf, p.Load.Threads), nil)
	sess.TargetLocal = targetLocal(p)
	end := sess.Begin("", 0)
	return func(s *measure.Step) *conditions.Record {
		end(s)
		return sess.Record()
	}
}

// maxConditionText bounds each text of a worker's machine (CPU model, kernel...).
const maxConditionText = 128

// checkConditions checks the conditions a worker sent with its step of elapsed (nil: none):
// one step at most, no target, every figure finite and within what its machine can hold,
// every text safe to print.
func (l limits) checkConditions(r *conditions.Record, elapsed measure.Duration) error {
	if r == nil {
		return nil
	}
	g := &r.Generator
	const maxCPUs = 1 << 16
	switch {
	case r.Version < 1 || r.Version > conditions.Version:
		return forged("its conditions: version %d", r.Version)
	case len(r.Steps) > 1 || r.Target != nil:
		return forged("its conditions: %d steps, a target", len(r.Steps))
	case g.CPUs < 0 || g.CPUs > maxCPUs || g.GOMAXPROCS < 0 || g.GOMAXPROCS > maxCPUs || g.Threads < 0 || g.Threads > maxCPUs || g.MemoryLimit < 0:
		return forged("its conditions: %d CPUs, GOMAXPROCS %d, %d threads", g.CPUs, g.GOMAXPROCS, g.Threads)
	case !finite(g.CPULimit, g.Load[0], g.Load[1], g.Load[2]) || g.CPULimit > maxCPUs || max(g.Load[0], g.Load[1], g.Load[2]) > 1e6:
		return forged("its conditions: CPU limit %v, load %v", g.CPULimit, g.Load)
	}
	for _, p := range []*string{&g.Apiperf, &g.GoVersion, &g.Arch, &g.CPUModel, &g.Governor, &g.Kernel} {
		*p = Printable(*p, maxConditionText)
	}
	cpus := float64(max(g.CPUs, 1))
	window := elapsed.Duration() + l.slack + stepGrace + l.share.Warmup.Duration() + l.share.Timeout.Duration()
	for i := range r.Steps {
		s := &r.Steps[i]
		s.Label, s.Rep = "", 0 // the coordinator names the step
		// sampled over too short a time, its CPU figures are clock ticks over nothing: unknown
		if s.Seconds >= 0 && s.Seconds < minSampledSeconds {
			s.Busy, s.Apiperf, s.Others, s.OthersMax, s.StealPct, s.RunWait = 0, 0, 0, 0, 0, 0
		}
		switch {
		case s.Target != nil:
			return forged("its conditions: a target's CPU")
		case !finite(s.Seconds, s.Busy, s.Apiperf, s.Others, s.OthersMax, s.StealPct, s.RunWait) || s.Seconds > window.Seconds():
			return forged("its conditions: %+v over a step of %v", *s, elapsed)
		case max(s.Busy, s.Apiperf, s.Others, s.OthersMax) > cpuBound(cpus, s.Seconds) || s.StealPct > 100 || s.RunWait > maxCPUs:
			return forged("its conditions: %.2f cores busy, apiperf %.2f, others %.2f (max %.2f), steal %.1f%%, run wait %.2f on %d CPUs",
				s.Busy, s.Apiperf, s.Others, s.OthersMax, s.StealPct, s.RunWait, g.CPUs)
		case s.Samples < 0 || float64(s.Samples) > math.Ceil(s.Seconds/conditions.DefaultInterval.Seconds()*4)+2:
			return forged("its conditions: %d samples in %.1fs", s.Samples, s.Seconds)
		}
	}
	return nil
}

// minSampledSeconds: a step's conditions sampled over less than this say nothing of its
// CPU (/proc counts in 10 ms clock ticks: one tick over 0.2 ms reads as 50 cores); they are
// kept as unknown, the worker's report is not refused for them.
const minSampledSeconds = 0.05

// cpuBound is the most cores a machine of cpus can show busy over seconds: /proc/stat counts
// in clock ticks (10 ms a CPU), so a step of a few milliseconds reads several times its CPUs.
func cpuBound(cpus, seconds float64) float64 {
	return (2*cpus + 1) * (1 + 0.1/max(seconds, 0.01))
}

// targetLocal says whether the plan's target is on the worker's loopback: its CPU is then
// among the others' on the worker's machine.
func targetLocal(p *Plan) bool {
	t, err := scenario.ParseTarget(p.Scenario.URL)
	if err != nil {
		return false
	}
	if strings.EqualFold(t.Host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(t.Host)
	return err == nil && ip.Unmap().IsLoopback()
}
