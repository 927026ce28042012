package profcap

import (
	"fmt"
	"slices"
	"strings"

	"github.com/apiperf/apiperf/exectrace"
	"github.com/apiperf/apiperf/procfs"
	"github.com/apiperf/apiperf/verdict"
)

// Evidence fills what the verdict reads of a level's target captures (one per repetition):
// l.Target (the process's CPU and RSS, from /proc when sampled, else the metrics; its
// goroutines and heap), l.Profile, l.Trace and l.Machine.
func Evidence(l *verdict.Level, caps []*StepRecord) {
	l.Target, l.Profile = targetUsage(caps)
	l.Trace = traceOf(caps)
	l.Machine = machineUsage(caps)
}

// targetUsage reads a level's target captures: CPU and RSS from /proc when sampled, else
// from the metrics; goroutines and heap at the end of the level and their rise within it;
// the profiles of the last capture that has them.
func targetUsage(caps []*StepRecord) (*verdict.Usage, *verdict.Profile) {
	var u verdict.Usage
	var prof *verdict.Profile
	var peers []procfs.Peer
	n := 0.0
	for _, ts := range caps {
		cpu, rss := stat(ts.ProcessSummary, func(s *Summary) *Stat { return s.CPUCores }),
			stat(ts.ProcessSummary, func(s *Summary) *Stat { return s.RSSBytes })
		if cpu == nil {
			cpu = stat(ts.Summary, func(s *Summary) *Stat { return s.CPUCores })
		}
		if rss == nil {
			rss = stat(ts.Summary, func(s *Summary) *Stat { return s.RSSBytes })
		}
		if cpu != nil {
			u.CPUCores += cpu.Mean
			n++
			if w := stat(ts.ProcessSummary, func(s *Summary) *Stat { return s.RunWaitCores }); w != nil {
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
			u.Goroutines, u.GoroutineRise = endAndRise(ts.Series, ts.Summary, func(p Point) *float64 { return p.Goroutines })
			u.HeapBytes, u.HeapRise = heapRise(ts.Series, ts.Summary)
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

func stat(s *Summary, f func(*Summary) *Stat) *Stat {
	if s == nil || s.Points == 0 {
		return nil
	}
	return f(s)
}

// endAndRise is a metric's last value in the summary's window and its rise with time at
// the level's load.
func endAndRise(s *Series, w *Summary, f func(Point) *float64) (end, rise float64) {
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

// heapRise is the heap in use at the end of the summary's window and its rise with time.
// With a few scrapes a level (2 s levels, 1 s apart) a trough then a peak of the collector's
// saw reads as a rise of several MiB on a target that keeps nothing. Where collections ran
// within the span the rise was taken over and the target exposes its heap goal, which moves
// only when a collection finds more live heap, the rise counts only as far as the goal rose
// too: a leak raises both (the goal by about twice the leak at GOGC=100), the saw only the
// heap in use. Without a collection in that span nothing tells what is kept from garbage,
// and the heap in use is all there is to read.
func heapRise(s *Series, w *Summary) (end, rise float64) {
	end, rise = endAndRise(s, w, func(p Point) *float64 { return p.HeapInuseBytes })
	var span []Point // the points endAndRise read, past the ramp's
	for _, p := range s.Points {
		if p.HeapInuseBytes != nil && p.Offset >= w.From && p.Offset <= w.To {
			span = append(span, p)
		}
	}
	if len(span) >= 3 {
		span = span[1:]
	}
	gcs := 0.0
	for _, p := range span[min(1, len(span)):] { // a point's collections are those since the one before
		if p.GCs != nil {
			gcs += *p.GCs
		}
	}
	if gcs == 0 {
		return end, rise
	}
	goal := func(p Point) *float64 {
		if v := p.HeapGoalBytes; v != nil && *v > 0 && *v < 1<<50 { // GOGC=off reports no goal worth reading
			return v
		}
		return nil
	}
	if goalEnd, goalRise := endAndRise(s, w, goal); goalEnd > 0 {
		rise = min(rise, goalRise)
	}
	return end, rise
}

// profileOf turns the profiles' analysis into what the verdict reads, its downstream waits
// located among the target's outbound connections.
func profileOf(a *Analysis, peers []procfs.Peer) *verdict.Profile {
	p := &verdict.Profile{}
	if a.CPU != nil {
		for _, e := range a.CPU.ByCum {
			if frameIs(e.Function, frameServing) {
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
func contentionOf(c *Contention) []verdict.Contention {
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

// nameDownstream names the downstream of http.Transport waits in p from the target's
// outbound connections: the one address it held connections to (stores' usual ports left
// out when there are several), else the candidates.
func nameDownstream(p *verdict.Profile, peers []procfs.Peer) {
	if p == nil || len(peers) == 0 {
		return
	}
	cand := peers
	if len(cand) > 1 {
		cand = slices.DeleteFunc(slices.Clone(peers), func(q procfs.Peer) bool { return slices.Contains(StorePorts, q.Addr.Port()) })
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
func machineUsage(caps []*StepRecord) *verdict.Machine {
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

// traceOf is what the verdict reads of a level's execution trace: the last capture that
// kept one, with the cores the target may use when /proc sampled its affinity.
func traceOf(caps []*StepRecord) *verdict.Trace {
	var ts *StepRecord
	for _, c := range caps {
		if c.Trace != nil && c.Trace.Summary != nil {
			ts = c
		}
	}
	if ts == nil {
		return nil
	}
	s := ts.Trace.Summary
	t := &verdict.Trace{GOMAXPROCS: s.GOMAXPROCS, BusyPs: s.BusyPs,
		SchedP50: s.Sched.P50, SchedP99: s.Sched.P99, GCPerSecond: s.GCPerSecond(),
		STWTotal: s.STWTotal, STWMax: s.STWMax, STWStopping: s.STWStopping, STWWorkMax: s.STWWorkMax, GCCPUPct: s.GCCPUPct(), AssistPct: s.AssistPct(), Assist: s.GCAssist, Span: s.Span}
	if ts.Process != nil && ts.Process.Cores > 0 {
		t.Cores = float64(ts.Process.Cores)
	}
	if g := s.Group(exectrace.GroupAssist); g != nil && len(g.Stacks) > 0 {
		t.AssistSite = g.Stacks[0].Function()
	}
	return t
}
