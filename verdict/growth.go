package verdict

import (
	"fmt"
	"strings"
)

// Growth says heap or goroutines grew level after level and never came back: a leak.
const Growth Kind = "growth"

// growthClaim: goroutines or heap that grow within every level and never come back.
func growthClaim(j *judgement) *Claim {
	in := j.in
	var gor, heap []Level
	for _, l := range in.Levels {
		if t := l.Target; t != nil && t.Goroutines > 0 {
			gor = append(gor, l)
		}
		if t := l.Target; t != nil && t.HeapBytes > 0 {
			heap = append(heap, l)
		}
	}
	var ev []string
	conf := Low
	if grows(gor, func(u *Usage) float64 { return u.Goroutines }, func(u *Usage) float64 { return u.GoroutineRise }, 10, 2) {
		ev = append(ev, fmt.Sprintf("goroutines grew with time within every level, at its constant load, and never came back: %s", series(gor, func(u *Usage) string {
			return num(u.Goroutines)
		})))
		conf = High
	}
	heapGrew := grows(heap, func(u *Usage) float64 { return u.HeapBytes }, func(u *Usage) float64 { return u.HeapRise }, 4<<20, 0)
	if i := lastProfiled(in.Levels); heapGrew && i >= 0 && len(in.Levels[i].Profile.Inuse) > 0 && captureOwn(in.Levels[i].Profile.Inuse[0].Name) {
		p := in.Levels[i].Profile
		// The capture runs at every level (profiles, the execution trace), and while it
		// records, its buffers are live heap of the target's: a rise they lead is apiperf's.
		j.silent(fmt.Sprintf("growth: live heap rose within every level, its largest site the capture's own (%s, %.0f%%): not read as a leak (give --trace-seconds 0 to judge the heap without the execution trace)",
			p.Inuse[0].Name, p.Inuse[0].Pct))
		heapGrew = false
	}
	if heapGrew {
		ev = append(ev, fmt.Sprintf("live heap grew with time within every level, at its constant load: %s MiB", series(heap, func(u *Usage) string {
			return fmt.Sprintf("%.0f", u.HeapBytes/(1<<20))
		})))
		if conf == Low {
			conf = Medium
		}
	}
	if len(gor) < 2 && len(heap) < 2 {
		j.silent("growth: goroutines and heap not measured per level (give --metrics for a Go target)")
	}
	if len(ev) == 0 {
		return nil
	}
	sum := "a leak: the target keeps goroutines or memory it never releases"
	goroutinesGrew := conf == High
	if i := lastProfiled(in.Levels); i >= 0 {
		p, label := in.Levels[i].Profile, in.Levels[i].Label
		switch {
		case len(p.Background) > 0 && (len(p.Waits) == 0 || p.Background[0].Count > p.Waits[0].Count):
			ev = append(ev, fmt.Sprintf("at %s %s goroutines serving no request wait in %s", label,
				num(float64(p.Background[0].Count)), p.Background[0].Site))
			if goroutinesGrew {
				sum += fmt.Sprintf("; %s goroutines serving no request wait in %s", num(float64(p.Background[0].Count)), p.Background[0].Site)
			}
		case len(p.Waits) > 0:
			ev = append(ev, "at "+label+" "+p.waitLine(p.Waits[0]))
		}
		if len(p.Inuse) > 0 {
			ev = append(ev, "live heap by site: "+functions(p.Inuse, 3))
			if !goroutinesGrew {
				sum += fmt.Sprintf("; most live heap allocated in %s", p.Inuse[0].Name)
			}
		}
	}
	return &Claim{
		Kind: Growth, Confidence: conf, Level: in.Levels[0].Label,
		Summary:  sum,
		Evidence: ev,
		Fix:      "find what the named sites start or keep and make sure it ends (a context, a close, a bounded cache)",
	}
}

// lastProfiled is the index of the last level with a profile, or -1.
func lastProfiled(ls []Level) int {
	for i := len(ls) - 1; i >= 0; i-- {
		if ls[i].Profile != nil {
			return i
		}
	}
	return -1
}

// captureOwn: allocation sites of apiperf's own capture inside the target, the execution
// trace's buffers and the profiler's, live while it records and gone after.
func captureOwn(site string) bool {
	return strings.HasPrefix(site, "runtime/trace.") || strings.HasPrefix(site, "runtime/pprof.") ||
		strings.HasPrefix(site, "net/http/pprof.")
}

// grows reports whether every level rose by at least minRise within it and the value never
// fell back below the previous level's. For goroutines (perInFlight > 0) the rise must also
// exceed perInFlight per request in flight: a server's goroutines follow its connections
// while a level ramps up, and only what rises past them is kept.
func grows(ls []Level, val, rise func(*Usage) float64, minRise, perInFlight float64) bool {
	if len(ls) < 2 {
		return false
	}
	for i, l := range ls {
		inFlight := l.inFlight()
		if !l.Open {
			inFlight = max(inFlight, l.Load)
		}
		if rise(l.Target) < minRise+perInFlight*inFlight {
			return false
		}
		if i > 0 && val(l.Target) <= val(ls[i-1].Target) {
			return false
		}
	}
	return true
}
