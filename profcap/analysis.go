package profcap

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// Analysis is what a run's JSON document keeps of the captured profiles.
// A part whose profile was not captured is nil.
type Analysis struct {
	// CPU is the top table of CPU time.
	CPU *TopTable `json:"cpu,omitempty"`
	// Hot is where the CPU time goes without the wrappers every request passes through.
	Hot *HotSpots `json:"hot,omitempty"`
	// Shares are the GC and allocation shares of CPU time.
	Shares *Shares `json:"shares,omitempty"`
	// AllocSpace lists allocation sites by bytes allocated since start.
	AllocSpace *TopTable `json:"alloc_space,omitempty"`
	// AllocPlace is the application frame that allocates the most bytes (alloc_space) and
	// the library it allocates them in.
	AllocPlace *Place `json:"alloc_place,omitempty"`
	// InuseSpace lists allocation sites by bytes live at the last GC.
	InuseSpace *TopTable `json:"inuse_space,omitempty"`
	// Goroutines is the goroutine count, or nil.
	Goroutines *int64 `json:"goroutines,omitempty"`
	// Waits groups the goroutines by where they were parked, or nil.
	Waits *Waits `json:"waits,omitempty"`
	// Flame is the CPU flame graph.
	Flame *FlameGraph `json:"flame,omitempty"`
	// Block and Mutex are where the block and mutex profiles say goroutines waited; nil
	// when the target did not enable them or nothing waited outside its plumbing.
	Block *Contention `json:"block,omitempty"`
	Mutex *Contention `json:"mutex,omitempty"`
}

// Analyze derives top tables (n rows; n <= 0 means DefaultTopN), CPU shares,
// allocation sites, the goroutine count and the CPU flame graph from p.
// A profile lacking what is expected gives a warning, not an error.
func Analyze(p *Profiles, n int) (Analysis, []string) {
	var a Analysis
	var warns []string
	warn := func(what string, err error) { warns = append(warns, what+": "+err.Error()) }
	if p.CPU != nil {
		if t, err := TopFunctions(p.CPU.Parsed, "cpu", n); err != nil {
			warn("cpu top table", err)
		} else {
			a.CPU = &t
		}
		if h, err := Hot(p.CPU.Parsed, "cpu", 0); err == nil && len(h.Functions) > 0 {
			a.Hot = &h
		}
		if s, err := CPUShares(p.CPU.Parsed, "cpu"); err == nil {
			a.Shares = &s
		}
		if g, err := Flame(p.CPU.Parsed, "cpu"); err == nil {
			a.Flame = &g
		}
	}
	if p.Heap != nil {
		if h, err := Hot(p.Heap.Parsed, "alloc_space", 1); err == nil {
			a.AllocPlace = h.Place
		}
		for _, typ := range []string{"alloc_space", "inuse_space"} {
			t, err := TopFunctions(p.Heap.Parsed, typ, n)
			if err != nil {
				warn("heap top table", err)
				continue
			}
			if typ == "alloc_space" {
				a.AllocSpace = &t
			} else {
				a.InuseSpace = &t
			}
		}
	}
	if p.Goroutine != nil {
		var total int64
		for _, s := range p.Goroutine.Parsed.Sample {
			if len(s.Value) > 0 {
				total += s.Value[0]
			}
		}
		a.Goroutines = &total
		w := WaitSites(p.Goroutine.Parsed, 0)
		a.Waits = &w
	}
	for _, q := range []*Profile{p.Block, p.Mutex} {
		if q == nil {
			continue
		}
		c, ok := ContentionSites(q.Kind, q.Parsed, 0)
		if !ok {
			continue
		}
		if q.Kind == KindBlock {
			a.Block = &c
		} else {
			a.Mutex = &c
		}
	}
	return a, warns
}

// Delta is how one function's share of a top table changed between two
// runs, in percentage points (After - Before).
type Delta struct {
	Function      string  `json:"function"`
	FlatPctBefore float64 `json:"flat_pct_before"`
	FlatPctAfter  float64 `json:"flat_pct_after"`
	CumPctBefore  float64 `json:"cum_pct_before"`
	CumPctAfter   float64 `json:"cum_pct_after"`
	FlatDelta     float64 `json:"flat_delta"`
	CumDelta      float64 `json:"cum_delta"`
}

// DiffTop compares the functions listed in a (before) and b (after), largest
// change first: by the larger of |FlatDelta| and |CumDelta|, then by name.
// A function absent from one table counts as 0% there, so compare tables
// built with a generous n. Functions whose shares did not move are left out.
func DiffTop(a, b TopTable) []Delta {
	before, after := shares(a), shares(b)
	var out []Delta
	for name := range before {
		if _, ok := after[name]; !ok {
			after[name] = TopEntry{Function: name}
		}
	}
	for name, e := range after {
		o := before[name]
		d := Delta{
			Function:      name,
			FlatPctBefore: o.FlatPct, FlatPctAfter: e.FlatPct,
			CumPctBefore: o.CumPct, CumPctAfter: e.CumPct,
			FlatDelta: e.FlatPct - o.FlatPct, CumDelta: e.CumPct - o.CumPct,
		}
		if d.FlatDelta == 0 && d.CumDelta == 0 {
			continue
		}
		out = append(out, d)
	}
	slices.SortFunc(out, func(x, y Delta) int {
		if c := cmp.Compare(deltaSize(y), deltaSize(x)); c != 0 {
			return c
		}
		return strings.Compare(x.Function, y.Function)
	})
	return out
}

func deltaSize(d Delta) float64 { return max(math.Abs(d.FlatDelta), math.Abs(d.CumDelta)) }

func shares(t TopTable) map[string]TopEntry {
	m := make(map[string]TopEntry, len(t.ByFlat)+len(t.ByCum))
	for _, e := range t.ByFlat {
		m[e.Function] = e
	}
	for _, e := range t.ByCum {
		m[e.Function] = e
	}
	return m
}
