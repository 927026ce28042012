package result

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/apiperf/apiperf/cluster"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/procfs"
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
		l.Target, l.Profile = targetUsage(targets)
		l.Trace = traceOf(targets) // trace.go
		l.Machine = machineUsage(targets)
		in.Levels = append(in.Levels, l)
	}
	for _, l := range in.Levels {
		if l.Trace != nil && l.Trace.Cores == 0 && in.SameMachine {
			l.Trace.Cores = float64(in.MachineCores) // beside apiperf, it may use the machine
		}
	}
	return in, true
}

// transportWait is how profcap names a wait for one of http.Transport's connections, whose
// downstream a goroutine profile cannot tell.
const transportWait = "http.Transport: waiting for a connection to the downstream"

// nameDownstream names the downstream of http.Transport waits in p from the target's
// outbound connections: the one address it held connections to (stores' usual ports left
// out when there are several), else the candidates.
func nameDownstream(p *verdict.Profile, peers []procfs.Peer) {
	if p == nil || len(peers) == 0 {
		return
	}
	cand := peers
	if len(cand) > 1 {
		cand = slices.DeleteFunc(slices.Clone(peers), func(q procfs.Peer) bool { return slices.Contains(profcap.StorePorts, q.Addr.Port()) })
	}
	var to string
	switch {
	case len(cand) == 1:
		to = fmt.Sprintf("http.Transport: waiting for a connection to %s, %d open", cand[0].Addr, cand[0].Conns)
	case len(cand) > 1:
		var parts []string
		for _, q := range cand[:min(3, len(cand))] {
			parts = append(parts, fmt.Sprintf("%s (%d)", q.Addr, q.Conns))
		}
		to = "http.Transport: waiting for a connection to one of " + strings.Join(parts, ", ")
	default:
		return
	}
	for _, ws := range [][]verdict.Wait{p.Waits, p.Background} {
		for i := range ws {
			ws[i].Site = strings.Replace(ws[i].Site, transportWait, to, 1)
		}
	}
	for _, cs := range [][]verdict.Contention{p.Block, p.Mutex} {
		for i := range cs {
			cs[i].Site = strings.Replace(cs[i].Site, transportWait, to, 1)
		}
	}
}

// machineUsage is the machine's CPU over a level's repetitions, nil when not measured.
func machineUsage(caps []*profcap.StepRecord) *verdict.Machine {
	var m verdict.Machine
	n := 0.0
	for _, ts := range caps {
		if u := ts.Machine; u != nil && u.CPUs > 0 {
			m.CPUs = u.CPUs
			m.Busy += u.Busy
			m.Steal += u.Steal
			for _, q := range ts.Outbound {
				m.Downstreams += q.CPUCores
			}
			n++
		}
	}
	if n == 0 {
		return nil
	}
	m.Busy /= n
	m.Steal /= n
	m.Downstreams /= n
	return &m
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

// targetUsage reads a level's target captures: CPU and RSS from /proc when sampled, else
// from the metrics; goroutines and heap at the end of the level and their rise within it;
// the profiles of the last capture that has them.
func targetUsage(caps []*profcap.StepRecord) (*verdict.Usage, *verdict.Profile) {
	var u verdict.Usage
	var prof *verdict.Profile
	var peers []procfs.Peer
	n := 0.0
	for _, ts := range caps {
		cpu, rss := stat(ts.ProcessSummary, func(s *profcap.Summary) *profcap.Stat { return s.CPUCores }),
			stat(ts.ProcessSummary, func(s *profcap.Summary) *profcap.Stat { return s.RSSBytes })
		if cpu == nil {
			cpu = stat(ts.Summary, func(s *profcap.Summary) *profcap.Stat { return s.CPUCores })
		}
		if rss == nil {
			rss = stat(ts.Summary, func(s *profcap.Summary) *profcap.Stat { return s.RSSBytes })
		}
		if cpu != nil {
			u.CPUCores += cpu.Mean
			n++
			if w := stat(ts.ProcessSummary, func(s *profcap.Summary) *profcap.Stat { return s.RunWaitCores }); w != nil {
				u.RunWaitCores += w.Mean
			}
		}
		if rss != nil {
			u.RSSBytes = max(u.RSSBytes, rss.Max)
		}
		if ts.Process != nil && ts.Process.Cores > 0 {
			u.Cores = float64(ts.Process.Cores)
		}
		if ts.Series != nil {
			for _, p := range ts.Series.Points {
				if p.GOMAXPROCS != nil && *p.GOMAXPROCS > 0 && (u.Cores == 0 || *p.GOMAXPROCS < u.Cores) {
					u.Cores = *p.GOMAXPROCS // a Go target runs on at most GOMAXPROCS cores
				}
			}
		}
		if ts.Series != nil && ts.Summary != nil {
			u.Goroutines, u.GoroutineRise = endAndRise(ts.Series, ts.Summary, func(p profcap.Point) *float64 { return p.Goroutines })
			u.HeapBytes, u.HeapRise = endAndRise(ts.Series, ts.Summary, func(p profcap.Point) *float64 { return p.HeapInuseBytes })
		}
		if ts.Profiles != nil {
			prof = profileOf(ts.Profiles, ts.Outbound)
		}
		if ts.Outbound != nil {
			peers = ts.Outbound
		}
	}
	nameDownstream(prof, peers)
	if n > 0 {
		u.CPUCores /= n
		u.RunWaitCores /= n
	}
	if u == (verdict.Usage{}) {
		return nil, prof
	}
	return &u, prof
}

func stat(s *profcap.Summary, f func(*profcap.Summary) *profcap.Stat) *profcap.Stat {
	if s == nil || s.Points == 0 {
		return nil
	}
	return f(s)
}

// endAndRise is a metric's last value in the summary's window and its rise with time at
// the level's load.
func endAndRise(s *profcap.Series, w *profcap.Summary, f func(profcap.Point) *float64) (end, rise float64) {
	var vs []float64
	for _, p := range s.Points {
		if v := f(p); v != nil && p.Offset >= w.From && p.Offset <= w.To {
			vs = append(vs, *v)
		}
	}
	if len(vs) == 0 {
		return 0, 0
	}
	end = vs[len(vs)-1]
	// At the level's constant load, past its ramp (the first sample, before the requests in
	// flight and their buffers and goroutines came in): with enough samples, the lowest value
	// of the second half above the lowest of the first. Troughs, not peaks: the heap's live
	// part is what is left after a collection, not the garbage between two.
	if len(vs) >= 3 {
		vs = vs[1:]
	}
	if len(vs) < 4 {
		return end, end - vs[0]
	}
	h := len(vs) / 2
	return end, slices.Min(vs[h:]) - slices.Min(vs[:h])
}

// plumbing are frames every Go server's CPU profile has at the top of its cumulative table.
var plumbing = []string{"runtime.", "net/http.(*conn).serve", "net/http.serverHandler.ServeHTTP",
	"net/http.HandlerFunc.ServeHTTP", "net/http.(*ServeMux).ServeHTTP", "internal/"}

// profileOf turns the profiles' analysis into what the verdict reads, its downstream waits
// located among the target's outbound connections.
func profileOf(a *profcap.Analysis, peers []procfs.Peer) *verdict.Profile {
	p := &verdict.Profile{}
	if a.CPU != nil {
		for _, e := range a.CPU.ByCum {
			if isPlumbing(e.Function) {
				continue
			}
			p.TopCum = append(p.TopCum, verdict.Function{Name: e.Function, Pct: e.CumPct})
		}
	}
	if h := a.Hot; h != nil {
		for _, f := range h.Functions {
			p.Hot = append(p.Hot, verdict.Function{Name: f.Name, Pct: f.Pct})
		}
		for _, f := range h.Packages {
			p.HotPackages = append(p.HotPackages, verdict.Function{Name: f.Name, Pct: f.Pct})
		}
		p.HotPath = h.PathString()
		if h.Place != nil {
			p.HotPlace, p.HotPlacePct = h.Place.String(), h.Place.Pct
		}
	}
	if a.AllocPlace != nil {
		p.AllocPlace = a.AllocPlace.String()
	}
	if a.Shares != nil {
		p.GCPct, p.AllocPct = a.Shares.GCPct, a.Shares.AllocPct
	}
	if a.Waits != nil {
		p.Goroutines = a.Waits.Total - a.Waits.Idle
		for _, s := range a.Waits.Sites {
			s.Locate(peers)
			p.Waits = append(p.Waits, verdict.Wait{Site: s.Site(), Count: s.Count, Reason: s.Reason})
		}
		for _, s := range a.Waits.Background {
			s.Locate(peers)
			p.Background = append(p.Background, verdict.Wait{Site: s.Site(), Count: s.Count, Reason: s.Reason})
		}
	} else if a.Goroutines != nil {
		p.Goroutines = *a.Goroutines
	}
	if a.InuseSpace != nil {
		for _, e := range a.InuseSpace.ByFlat {
			p.Inuse = append(p.Inuse, verdict.Function{Name: e.Function, Pct: e.FlatPct})
		}
	}
	p.Block, p.Mutex = contentionOf(a.Block), contentionOf(a.Mutex)
	return p
}

// contentionOf is a block or mutex profile's sites as the verdict reads them.
func contentionOf(c *profcap.Contention) []verdict.Contention {
	if c == nil {
		return nil
	}
	var out []verdict.Contention
	for _, s := range c.Sites {
		v := verdict.Contention{Site: s.Site(), Events: s.Events, Pct: c.Pct(s)}
		if c.Seconds > 0 {
			v.Waiting = float64(s.DelayNs) / 1e9 / c.Seconds
		}
		out = append(out, v)
	}
	return out
}

func isPlumbing(fn string) bool {
	for _, p := range plumbing {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
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
