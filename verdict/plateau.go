package verdict

import "fmt"

// plateau is where throughput stopped following load: levels from..to. A weak one is
// throughput that grew far less than the load across the run without a level it stopped
// at (a noisy machine moves every level's QPS): the claims resting on it are not high.
type plateau struct {
	ok       bool
	weak     bool
	from, to int
}

// saturation finds the plateau. Closed loop: from the first level near the peak after which
// QPS grew no more than PlateauGain times while load grew PlateauLoad times, to the last
// level. Open loop: from the first level whose QPS fell short of its rate by more than
// 1-PlateauQPS.
func (j *judgement) saturation() plateau {
	in, t := j.in, j.t
	n := len(in.Levels)
	if in.Peak < 0 || in.Peak >= n || n < 2 {
		return plateau{}
	}
	peak := in.Levels[in.Peak].QPS
	if in.Levels[0].Open {
		for i, l := range in.Levels {
			if l.Load > 0 && l.QPS < t.PlateauQPS*l.Load {
				return plateau{ok: true, from: max(0, min(i, in.Peak)), to: n - 1}
			}
		}
		return plateau{}
	}
	for i, l := range in.Levels[:n-1] {
		if l.QPS < t.PlateauNear*peak || in.Levels[n-1].Load < t.PlateauLoad*l.Load {
			continue
		}
		best := 0.0
		for _, m := range in.Levels[i+1:] {
			best = max(best, m.QPS)
		}
		if best <= t.PlateauGain*l.QPS {
			return plateau{ok: true, from: i, to: n - 1}
		}
	}
	// Weak: load rose PlateauLoad squared times or more and QPS less than a sixth as much.
	a, b := in.Levels[0], in.Levels[n-1]
	if a.QPS > 0 && a.Load > 0 && b.Load >= t.PlateauLoad*t.PlateauLoad*a.Load && b.QPS/a.QPS <= b.Load/a.Load/6 {
		return plateau{ok: true, weak: true, from: 0, to: n - 1}
	}
	return plateau{}
}

func (p plateau) evidence(in Input) string {
	a, b := in.Levels[p.from], in.Levels[p.to]
	if a.Open {
		return fmt.Sprintf("at %s the target completed %s req/s of %s asked", a.Label, num(a.QPS), num(a.Load))
	}
	if p.weak {
		return fmt.Sprintf("throughput grew only %.1fx from %s to %s (%s -> %s req/s) while load rose %.1fx, unevenly (no level where it stopped)",
			b.QPS/a.QPS, a.Label, b.Label, num(a.QPS), num(b.QPS), b.Load/a.Load)
	}
	return fmt.Sprintf("throughput stopped growing from %s to %s: %s -> %s req/s (%+.0f%%) while load rose %.1fx",
		a.Label, b.Label, num(a.QPS), num(b.QPS), 100*(b.QPS/a.QPS-1), b.Load/a.Load)
}

// little checks Little's law on every level.
func (j *judgement) little() []LittleCheck {
	var out []LittleCheck
	for _, l := range j.in.Levels {
		c := LittleCheck{Label: l.Label, Load: l.Load, InFlight: l.inFlight(), OK: true}
		switch {
		case l.QPS == 0 || l.Mean == 0:
			c.Note = "no responses"
		case l.Open:
			c.Note = fmt.Sprintf("%.1f requests in flight on average", c.InFlight)
		default:
			c.Ratio = c.InFlight / l.Load
			if c.Ratio < j.t.LittleLow || c.Ratio > j.t.LittleHigh {
				c.OK = false
				c.Note = fmt.Sprintf("QPS x mean latency = %.1f in flight, not the %s connections", c.InFlight, num(l.Load))
				if c.Ratio < j.t.LittleLow {
					c.Note += ": connections sat idle between requests (generator slow to send, connects, or errors)"
				}
			}
		}
		out = append(out, c)
	}
	return out
}

// wantsCPU: a request goroutine running, runnable, or allocating and held up by the
// garbage collector wants CPU, not a resource.
func wantsCPU(reason string) bool { return reason == "running" || reason == "GC" }

// cpuShare is the share of p's request goroutines that want CPU, and the site with the most.
func (p *Profile) cpuShare() (float64, *Wait) {
	if p == nil || p.Goroutines <= 0 {
		return 0, nil
	}
	var n int64
	var top *Wait
	for i, w := range p.Waits {
		if wantsCPU(w.Reason) {
			n += w.Count
			if top == nil {
				top = &p.Waits[i]
			}
		}
	}
	return float64(n) / float64(p.Goroutines), top
}

// waitLine is "N of M request goroutines wait in SITE" for one of p's wait sites.
func (p *Profile) waitLine(w Wait) string {
	return fmt.Sprintf("%s of %s request goroutines wait in %s", num(float64(w.Count)), num(float64(p.Goroutines)), w.Site)
}

// topDownstream is p's wait site with the most request goroutines waiting for a downstream's
// answer, or nil.
func (p *Profile) topDownstream() *Wait {
	for i, w := range p.Waits {
		if w.Reason == "downstream" {
			return &p.Waits[i]
		}
	}
	return nil
}

// runningAt is the profile from level i on whose request goroutines most want CPU, its
// share and top site; nil when no profile there has wait sites.
func (j *judgement) runningAt(i int) (*Profile, float64, *Wait) {
	var best *Profile
	var share float64
	var site *Wait
	for ; i >= 0 && i < len(j.in.Levels); i++ {
		p := j.in.Levels[i].Profile
		if sh, w := p.cpuShare(); w != nil && (best == nil || sh > share) {
			best, share, site = p, sh, w
		}
	}
	return best, share, site
}

// running is the plateau's latest goroutine profile: the share of its request goroutines
// that want CPU, and their top site; 0 without a plateau or a profile.
func (j *judgement) running() (*Profile, float64, *Wait) {
	for i := j.sat.to; j.sat.ok && i >= j.sat.from; i-- {
		if p := j.in.Levels[i].Profile; p != nil && len(p.Waits) > 0 && p.Goroutines > 0 {
			sh, w := p.cpuShare()
			return p, sh, w
		}
	}
	return nil, 0, nil
}
