package measure

import "fmt"

// GeneratorLimit is a limit of apiperf's own machine that kept a step from opening the
// connections it asked for: the kernel refused a connection for a reason of the generator
// (no local port left, no file descriptor, no socket buffer), not of the target. The step's
// numbers are then the generator's ceiling; it is marked generator-limited in every output
// and is never the peak, the knee or a failure of the target.
type GeneratorLimit struct {
	// Errno is the error the kernel gave, e.g. "EADDRNOTAVAIL", "EMFILE".
	Errno string `json:"errno"`
	// Resource names what ran out, e.g. "local ports", "open files".
	Resource string `json:"resource"`
	// Connections is how many connections were open when the limit was hit; Wanted how
	// many the step asked for (closed loop: -c; open loop: the pool it tried to grow to).
	Connections int `json:"connections"`
	Wanted      int `json:"wanted"`
	// Fix says how to raise the limit, e.g. "add source addresses with --source".
	Fix string `json:"fix"`
}

// String is the one line that names the limit and its fix, e.g. "generator limit: local
// ports exhausted (EADDRNOTAVAIL) at 1000 of 1500 connections; ...; fix: ...".
func (g *GeneratorLimit) String() string {
	if g == nil {
		return ""
	}
	return "generator limit: " + g.Detail()
}

// Detail is String without its "generator limit: " prefix.
func (g *GeneratorLimit) Detail() string {
	return fmt.Sprintf("%s exhausted (%s) at %d of %d connections; not the target's failure; fix: %s",
		g.Resource, g.Errno, g.Connections, g.Wanted, g.Fix)
}

// Brief is the limit in a few words for tables: "generator-limited: local ports at 1000".
func (g *GeneratorLimit) Brief() string {
	if g == nil {
		return ""
	}
	return fmt.Sprintf("generator-limited: %s ran out at %d of %d connections", g.Resource, g.Connections, g.Wanted)
}

// mergeLimit combines the limits of two merged steps (other workers or hosts): connections
// open and wanted add up; the first one's kind is kept.
func mergeLimit(a, b *GeneratorLimit, aWanted, bWanted int) *GeneratorLimit {
	if a == nil && b == nil {
		return nil
	}
	out := GeneratorLimit{}
	for _, g := range []*GeneratorLimit{b, a} {
		if g != nil {
			out.Errno, out.Resource, out.Fix = g.Errno, g.Resource, g.Fix
		}
	}
	add := func(g *GeneratorLimit, wanted int) {
		if g == nil {
			out.Connections += wanted // that side opened what it asked for
			out.Wanted += wanted
			return
		}
		out.Connections += g.Connections
		out.Wanted += g.Wanted
	}
	add(a, aWanted)
	add(b, bWanted)
	return &out
}

// Bound reports whether apiperf was short of CPU during the step, so the step's numbers may
// be the generator's ceiling: it used 85% of the cores it may use, or it used at least a
// quarter of them and what it used and what its threads waited for on a run queue together
// reach 85% of them (other processes kept it off its cores).
func (g *Generator) Bound() bool {
	if g == nil || g.Cores <= 0 {
		return false
	}
	used, wait := g.CPUCores(), g.RunWaitCores()
	return used >= ShortShare*g.Cores || (used >= StarvedShare*g.Cores && used+wait >= ShortShare*g.Cores)
}

// Thresholds of Generator.Bound: the share of its cores a process uses (or uses and waits
// for) to be at its cores, and the least share it must use for its waits to count.
const (
	ShortShare   = 0.85
	StarvedShare = 0.25
)
