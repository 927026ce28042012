package exectrace

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/exp/trace"
)

func (a *analysis) summary() *Summary {
	for _, g := range a.gs {
		a.flush(g, a.last)
		if b := g.blocked; b != nil {
			a.addStack(b.group, b.stack, a.last.Sub(b.at))
		}
	}
	for id := range a.assists {
		a.assistEnd(id, a.last)
	}
	for _, at := range a.procs {
		a.procBusy += a.last.Sub(at)
	}
	s := a.s
	s.Span = a.last.Sub(a.first)
	if s.Span > 0 {
		s.BusyPs = float64(a.procBusy) / float64(s.Span)
	}
	s.Sched = latency(a.sched)
	var all time.Duration
	for _, d := range a.states {
		all += d
	}
	for _, name := range StateOrder {
		if d := a.states[name]; d > 0 {
			s.States = append(s.States, StateTime{State: name, Time: d, Pct: 100 * float64(d) / float64(all)})
		}
	}
	for _, grp := range []string{GroupSync, GroupNet, GroupSyscall, GroupSched, GroupAssist} {
		if g := topStacks(grp, a.stacks[grp]); g != nil {
			s.Blocking = append(s.Blocking, *g)
		}
	}
	s.Regions, s.Tasks = spans(a.regions), spans(a.tasks)
	return &s
}

func latency(ds []time.Duration) Latency {
	if len(ds) == 0 {
		return Latency{}
	}
	slices.Sort(ds)
	at := func(q float64) time.Duration { return ds[min(len(ds)-1, int(q*float64(len(ds))))] }
	return Latency{Count: len(ds), P50: at(0.50), P99: at(0.99), Max: ds[len(ds)-1]}
}

// topStacks merges stacks with the same frames (the parser's stack tables are per
// generation) and keeps the TopStacks with the most time.
func topStacks(group string, m map[trace.Stack]*BlockStack) *BlockGroup {
	merged := map[string]*BlockStack{}
	g := &BlockGroup{Group: group}
	for _, b := range m {
		if b == nil {
			continue
		}
		var key strings.Builder
		for _, f := range b.Frames {
			fmt.Fprintf(&key, "%s:%s:%d;", f.Func, f.File, f.Line)
		}
		g.Total += b.Time
		if x := merged[key.String()]; x != nil {
			x.Time += b.Time
			x.Count += b.Count
			continue
		}
		c := *b
		merged[key.String()] = &c
	}
	if len(merged) == 0 {
		return nil
	}
	for _, b := range merged {
		g.Stacks = append(g.Stacks, *b)
	}
	slices.SortFunc(g.Stacks, func(x, y BlockStack) int {
		if c := cmp.Compare(y.Time, x.Time); c != 0 {
			return c
		}
		if c := cmp.Compare(y.Count, x.Count); c != 0 {
			return c
		}
		return cmp.Compare(x.Site(), y.Site())
	})
	g.Stacks = g.Stacks[:min(TopStacks, len(g.Stacks))]
	return g
}

func spans(m map[string]*Span) []Span {
	var out []Span
	for _, s := range m {
		s.Mean = s.Total / time.Duration(s.Count)
		out = append(out, *s)
	}
	slices.SortFunc(out, func(x, y Span) int {
		if c := cmp.Compare(y.Total, x.Total); c != 0 {
			return c
		}
		return cmp.Compare(x.Name, y.Name)
	})
	return out
}
