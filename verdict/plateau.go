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

// runningProfileAt is the profile with wait sites at level i or the nearest after it, or nil.
func (j *judgement) runningProfileAt(i int) *Profile {
	for ; i >= 0 && i < len(j.in.Levels); i++ {
		if p := j.in.Levels[i].Profile; p != nil && len(p.Waits) > 0 && p.Goroutines > 0 {
			return p
		}
	}
	return nil
}

// runningShareAt is runningShare of runningProfileAt(i).
func (j *judgement) runningShareAt(i int) float64 {
	p := j.runningProfileAt(i)
	if p == nil || p.Waits[0].Reason != "running" {
		return 0
	}
	return float64(p.Waits[0].Count) / float64(p.Goroutines)
}

// runningProfile is the latest profile on the plateau with wait sites, or nil.
func (j *judgement) runningProfile() *Profile {
	for i := j.sat.to; j.sat.ok && i >= j.sat.from; i-- {
		if p := j.in.Levels[i].Profile; p != nil && len(p.Waits) > 0 && p.Goroutines > 0 {
			return p
		}
	}
	return nil
}

// runningShare is the share of request goroutines at the top wait site when that site is
// "running" (on CPU or runnable), on the plateau's latest goroutine profile; 0 otherwise.
func (j *judgement) runningShare() float64 {
	p := j.runningProfile()
	if p == nil || p.Waits[0].Reason != "running" {
		return 0
	}
	return float64(p.Waits[0].Count) / float64(p.Goroutines)
}
