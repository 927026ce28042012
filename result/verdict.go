package result

import (
	"fmt"
	"net"
	"net/url"
	"slices"

	"github.com/apiperf/apiperf/cluster"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/profcap"
	"github.com/apiperf/apiperf/verdict"
)

// Judge computes the run's verdict from its levels and what was captured from the target,
// stores it in r.Verdict and returns it; nil for a run without levels.
func (r *Run) Judge() *verdict.Verdict {
	in, ok := r.VerdictInput()
	if !ok {
		return nil
	}
	v := verdict.Judge(in)
	r.Verdict = &v
	return r.Verdict
}

// VerdictInput gathers what the verdict reads of r: per level its numbers, apiperf's own
// use of the machine, the target's process (/proc or metrics) and its profiles.
func (r *Run) VerdictInput() (verdict.Input, bool) {
	if r.Sweep == nil || len(r.Sweep.Levels) == 0 {
		return verdict.Input{}, false
	}
	in := verdict.Input{Peak: r.Sweep.Peak, SameMachine: r.sameMachine(), Ran: r.probeOrder(),
		GRPC: slices.ContainsFunc(r.Steps, func(s *measure.Step) bool { return s != nil && s.GRPC != nil })}
	if r.Target != nil {
		in.TargetProcess = r.Target.PIDSource
	}
	for _, p := range r.Sweep.Levels {
		l := verdict.Level{Label: p.Label, Load: p.Value, Open: p.Open, QPS: p.QPS,
			Mean: p.Mean.Duration(), P99: p.P99.Duration(), Attempts: p.Attempts, Errors: p.Errors,
			Status: measure.AddStatus(nil, p.Status)}
		if g := p.GeneratorLimit; g != nil {
			l.GeneratorLimit, l.GeneratorFix = g.Detail(), g.Fix
			if !p.Open && g.Connections > 0 {
				l.Load = float64(g.Connections) // what was in flight: the connections it could open
			}
		}
		if !p.Open && r.Load.HTTP2 {
			l.Load *= float64(r.Load.StreamsPerConn()) // in flight: every connection's streams
		}
		var gens []*measure.Generator
		var targets []*profcap.StepRecord
		for _, j := range p.Steps {
			if j < 0 || j >= len(r.Steps) {
				continue
			}
			s := r.Steps[j]
			if o := s.Open; o != nil {
				l.LateSends += o.LateSends
				l.Scheduled += o.Scheduled
				l.MaxLag = max(l.MaxLag, o.MaxLag.Duration())
			}
			l.ServerTiming = l.ServerTiming.Merge(s.ServerTiming)
			if l.Exemplars == nil {
				l.Exemplars = s.Exemplars
			}
			if s.Generator != nil {
				gens = append(gens, s.Generator)
				in.MachineCores = max(in.MachineCores, s.Generator.MachineCPUs)
			}
			if ts := r.Target.Step(s.Label, s.Rep); ts != nil {
				targets = append(targets, ts)
			}
		}
		l.Generator = generatorUsage(gens)
		l.Workers = r.workersAt(p.Steps)
		profcap.Evidence(&l, targets)
		in.Levels = append(in.Levels, l)
	}
	for _, l := range in.Levels {
		if l.Trace != nil && l.Trace.Cores == 0 && in.SameMachine {
			l.Trace.Cores = float64(in.MachineCores) // beside apiperf, it may use the machine
		}
	}
	return in, true
}

// probeOrder is the order a capacity search probed its levels, as indexes of its levels;
// nil for other runs.
func (r *Run) probeOrder() []int {
	if r.Capacity == nil || r.Sweep == nil {
		return nil
	}
	var out []int
	for _, p := range r.Capacity.Probes {
		for i, l := range r.Sweep.Levels {
			if l.Value == p.Rate && !slices.Contains(out, i) {
				out = append(out, i)
			}
		}
	}
	return out
}

// sameMachine: the target is on loopback or was sampled from /proc.
func (r *Run) sameMachine() bool {
	if r.Target != nil {
		for _, ts := range r.Target.Steps {
			if ts.Process != nil {
				return true
			}
		}
	}
	u, err := url.Parse(r.Scenario.URL)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// generatorUsage is the mean over a level's repetitions.
func generatorUsage(gens []*measure.Generator) *verdict.Usage {
	if len(gens) == 0 {
		return nil
	}
	u := &verdict.Usage{}
	for _, g := range gens {
		u.CPUCores += g.CPUCores() / float64(len(gens))
		u.RunWaitCores += g.RunWaitCores() / float64(len(gens))
		u.Cores = g.Cores
		u.SchedSlowPct = max(u.SchedSlowPct, g.SchedSlowPct)
	}
	return u
}

// PeakUsage is the target's CPU (cores, mean) and RSS (bytes, max) at the run's peak, from
// /proc (--target-pid) or its metrics; 0 when not measured.
func (r *Run) PeakUsage() (cpu, rss float64) {
	in, ok := r.VerdictInput()
	if !ok || in.Peak < 0 || in.Peak >= len(in.Levels) || in.Levels[in.Peak].Target == nil {
		return 0, 0
	}
	t := in.Levels[in.Peak].Target
	return t.CPUCores, t.RSSBytes
}

// workersAt is each worker's own generator over the steps of a level (indexes of r.Steps),
// from the scale-out's health record; nil on one machine or when it was not recorded.
func (r *Run) workersAt(steps []int) []verdict.Worker {
	c := r.Cluster
	if c == nil || len(c.Steps) == 0 {
		return nil
	}
	var out []verdict.Worker
	gens := map[int][]*measure.Generator{}
	others := map[int][]float64{}
	for _, j := range steps {
		if j < 0 || j >= len(r.Steps) {
			continue
		}
		i := slices.IndexFunc(c.Steps, func(h cluster.StepHealth) bool { return h.Label == r.Steps[j].Label && h.Rep == r.Steps[j].Rep })
		if i < 0 {
			continue
		}
		for _, h := range c.Steps[i].Workers {
			k := slices.IndexFunc(out, func(w verdict.Worker) bool { return w.Name == workerName(c, h.Worker) })
			if k < 0 {
				out = append(out, verdict.Worker{Name: workerName(c, h.Worker)})
				k = len(out) - 1
			}
			if h.Generator != nil {
				gens[k] = append(gens[k], h.Generator)
			}
			if h.Conditions != nil && !h.Conditions.OthersHasTarget {
				others[k] = append(others[k], h.Conditions.Others)
			}
			if h.Limit != nil && out[k].GeneratorLimit == "" {
				out[k].GeneratorLimit = h.Limit.Detail()
			}
		}
	}
	for k := range out {
		out[k].Generator = generatorUsage(gens[k])
		for _, o := range others[k] {
			out[k].Others += o / float64(len(others[k]))
		}
	}
	return out
}

// workerName is "worker 2 (gen-b)": worker k (from 1) with the host it named itself.
func workerName(c *cluster.Record, k int) string {
	for _, s := range c.Shares {
		if s.Worker == k && s.Host != "" {
			return fmt.Sprintf("worker %d (%s)", k, s.Host)
		}
	}
	return fmt.Sprintf("worker %d", k)
}
