package sweep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
)

// MinKeptUp is the share of its target rate a probe must send to pass: below it the target
// (or the generator) did not keep up with the rate, whatever the latency says.
const MinKeptUp = 0.95

// Verdicts of a capacity probe.
const (
	VerdictMet         = "met"         // the probe met the objective and kept up with its rate
	VerdictFailed      = "failed"      // it missed the objective or fell behind its rate
	VerdictInterrupted = "interrupted" // ctx ended during it: neither pass nor fail
	// VerdictGeneratorLimited: apiperf's own machine could not open the connections the rate
	// needed (local ports, file descriptors): neither pass nor fail of the target.
	VerdictGeneratorLimited = "generator-limited"
)

// Capacity is the record of `apiperf capacity`: every probe in the order it ran and the
// answer. A rate bounds the search as failing only when a second probe at the same rate
// (the confirmation) fails too.
type Capacity struct {
	Search    Search    `json:"search"`
	Objective Objective `json:"objective"`
	Probes    []Probe   `json:"probes"`
	// Answer is the highest rate that met the objective (0 when none did).
	Answer float64 `json:"answer"`
	// Limit is the lowest confirmed failing rate above Answer (0 when none).
	Limit float64 `json:"limit,omitempty"`
	// Interrupted says the search was stopped before it knew its answer.
	Interrupted bool `json:"interrupted,omitempty"`
	// GaveUp says why the search stopped by itself before it knew its answer: the target
	// could not be reached, or a probe hit a limit of apiperf's own machine; "" otherwise.
	GaveUp string `json:"gave_up,omitempty"`
}

// Probe is one measured rate and the verdict on it: VerdictMet, VerdictFailed or
// VerdictInterrupted, with the reason (what was measured against what was wanted).
type Probe struct {
	Rate     float64 `json:"rate"`
	Achieved float64 `json:"achieved_rate,omitempty"` // requests sent in the window per second of it (Level.Achieved)
	Sent     int64   `json:"sent"`                    // requests sent in the window
	Due      int64   `json:"due"`                     // requests that came due in it
	Verdict  string  `json:"verdict"`
	Reason   string  `json:"reason"`
	// Confirms says this probe re-ran a rate whose first probe failed.
	Confirms bool `json:"confirms,omitempty"`
	Step     int  `json:"step"` // index into the run's steps
	// P99 and Success are the probe's figures, for the table.
	P99     measure.Duration `json:"p99"`
	Success float64          `json:"success_pct"`
}

// Met reports whether the probe passed.
func (p Probe) Met() bool { return p.Verdict == VerdictMet }

// Judge gives the verdict on a probe at rate from its level: the objective's terms
// (latency, success, errors, qps) and whether the target kept up with the rate: the
// requests sent in the window against those that came due in it (requests still in flight
// at its end count as sent, so a slow target is not failed for its latency alone).
func Judge(l Level, rate float64, o Objective) (met bool, reason string) {
	misses := o.Misses(l)
	if l.Successes == 0 {
		misses = append(misses, "no request succeeded") // whatever the objective leaves out
	}
	due := float64(dueOf(l, rate))
	if due > 0 && float64(l.Attempts) < MinKeptUp*due {
		misses = append(misses, fmt.Sprintf("sent %d of %.0f requests due (< %.0f%%): the target or the generator fell behind %s req/s",
			l.Attempts, due, MinKeptUp*100, load.FormatRate(rate)))
	}
	if len(misses) > 0 {
		return false, strings.Join(misses, "; ")
	}
	return true, fmt.Sprintf("p99 %s, success %s%%, sent %d of %.0f due: meets %s and kept up", formatLatency(round3(l.P99.Duration())),
		pct(l.Success), l.Attempts, due, o)
}

// dueOf is how many requests came due in a probe's window: the schedule's count, or, when
// none was recorded, the rate over the window the attempt rate implies.
func dueOf(l Level, rate float64) int64 {
	if l.Scheduled > 0 || l.Achieved <= 0 {
		return l.Scheduled
	}
	return int64(math.Round(float64(l.Attempts) * rate / l.Achieved))
}

// CapacityRunner runs a capacity search driven by a step function: one open-loop step per
// probe (after an unmeasured warmup), a second probe at the same rate to confirm a failure.
type CapacityRunner struct {
	Search    Search
	Objective Objective
	Base      load.Config   // the load of every probe; the search sets its rate
	Warmup    time.Duration // unmeasured load before each probe
	Step      StepFunc
	Hook      Hook
	// Save is called after every probe with the steps and the record so far.
	Save func(steps []*measure.Step, c *Capacity) error
}

// Run searches for the highest rate meeting the objective. It returns the record and the
// steps (one per probe); after an error, what was measured so far with it.
func (r CapacityRunner) Run(ctx context.Context) (*Capacity, []*measure.Step, error) {
	defer useThreads(r.Base)()
	c := &Capacity{Search: r.Search, Objective: r.Objective}
	var steps []*measure.Step
	var decided []Decision // one per rate decided: met, or failed twice
	for {
		rate, done := r.Search.Next(decided)
		if done {
			break
		}
		if ctx.Err() != nil {
			c.Interrupted = true
			break
		}
		met, stop, err := r.probe(ctx, c, &steps, rate, false)
		if err != nil {
			return c, steps, err
		}
		if stop == "" && !met {
			met, stop, err = r.probe(ctx, c, &steps, rate, true)
			if err != nil {
				return c, steps, err
			}
		}
		if stop == VerdictInterrupted {
			c.Interrupted = true
			break
		}
		if stop != "" {
			c.GaveUp = stop
			break
		}
		decided = append(decided, Decision{Rate: rate, Met: met})
		pass, fail := Bracket(decided)
		c.Answer, c.Limit = pass, 0
		if !math.IsInf(fail, 1) {
			c.Limit = fail
		}
	}
	return c, steps, nil
}

// probe runs one probe at rate and records it. stop is VerdictInterrupted when ctx ended
// during it, or why the search cannot go on: the target cannot be reached (seen already in
// the warmup, so a dead port ends the search within a second), or the generator's own limit.
func (r CapacityRunner) probe(ctx context.Context, c *Capacity, steps *[]*measure.Step, rate float64, confirm bool) (met bool, stop string, err error) {
	cfg := r.Base
	cfg.Rate = rate
	label := Label(true, rate)
	info := StepInfo{Label: label, Level: len(c.Probes), Reps: 1, Config: cfg}
	if confirm {
		info.Rep, info.Reps = 1, 2
	}
	if r.Warmup > 0 {
		w := info
		w.Warmup = true
		w.Config.Duration, w.Config.Requests = measure.Duration(r.Warmup), 0
		ws, err := runStep(ctx, r.Step, r.Hook, w)
		if err != nil {
			return false, "", fmt.Errorf("warming up %s: %w", label, err)
		}
		if ctx.Err() != nil {
			return false, VerdictInterrupted, nil
		}
		if why := unreachable(ws); why != "" {
			return false, fmt.Sprintf("warming up %s: %s", label, why), nil
		}
	}
	s, err := runStep(ctx, r.Step, r.Hook, info)
	if err != nil {
		return false, "", fmt.Errorf("%s: %w", label, err)
	}
	*steps = append(*steps, s)
	l := Reduce(label, rate, true, []*measure.Step{s}, []int{0})
	p := Probe{Rate: rate, Achieved: l.Achieved, Sent: l.Attempts, Due: dueOf(l, rate), Confirms: confirm, Step: len(*steps) - 1, P99: l.P99, Success: l.Success}
	switch ok, why := Judge(l, rate, r.Objective); {
	case ctx.Err() != nil:
		p.Verdict, p.Reason = VerdictInterrupted, "interrupted during the probe: neither pass nor fail"
		stop = VerdictInterrupted
	case l.GeneratorLimited():
		p.Verdict, p.Reason = VerdictGeneratorLimited, l.GeneratorLimit.String()
		stop = fmt.Sprintf("%s: %s", label, p.Reason)
	case unreachable(s) != "":
		p.Verdict, p.Reason = VerdictFailed, unreachable(s)
		stop = fmt.Sprintf("%s: %s", label, p.Reason)
	case ok:
		p.Verdict, p.Reason = VerdictMet, why
		if confirm {
			p.Reason += " (the first probe's failure was not confirmed)"
		}
	default:
		p.Verdict, p.Reason = VerdictFailed, why
		if confirm {
			p.Reason += " (confirmed)"
		}
	}
	c.Probes = append(c.Probes, p)
	if r.Save != nil {
		if err := r.Save(*steps, c); err != nil {
			return false, "", err
		}
	}
	return p.Met(), stop, nil
}

// unreachable is why the engine stopped a step because the target could not be reached
// (nothing listens, every TLS handshake failed), "" when it did not.
func unreachable(s *measure.Step) string {
	if err := s.Err(); errors.Is(err, measure.ErrUnreachable) || errors.Is(err, measure.ErrTLS) {
		return err.Error()
	}
	return ""
}

// roundSig rounds v to n significant digits without binary noise (93.80000000000001 -> 93.8).
func roundSig(v float64, n int) float64 {
	if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return v
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', n, 64), 64)
	return r
}

// Headline states the answer so that it agrees with the probe table: the highest rate
// that met the objective, the lowest confirmed failure above it, and, when the answer is
// below the start rate or missing, why.
func (c *Capacity) Headline() string {
	obj := c.Objective.String()
	var b strings.Builder
	switch {
	case c.Answer == 0 && c.GaveUp != "":
		return "capacity: unknown: gave up at " + c.GaveUp
	case len(c.Probes) == 0:
		return "capacity: no probe ran"
	case c.Answer == 0 && c.Interrupted:
		return fmt.Sprintf("capacity: unknown: interrupted before any rate met %s", obj)
	case c.Answer == 0:
		fmt.Fprintf(&b, "capacity: no probed rate met %s (lowest tried: %s req/s: %s)", obj, load.FormatRate(c.lowest().Rate), c.lowest().Reason)
		return b.String()
	case c.Limit == 0 && (c.Interrupted || c.GaveUp != ""):
		fmt.Fprintf(&b, "capacity: at least %s req/s meets %s", load.FormatRate(c.Answer), obj)
	case c.Limit == 0:
		fmt.Fprintf(&b, "capacity: at least %s req/s meets %s (no probe failed twice; raise --max-rate or --max-probes)", load.FormatRate(c.Answer), obj)
	default:
		fmt.Fprintf(&b, "capacity: %s req/s meets %s; %s req/s does not (failed twice) (%d probes)", load.FormatRate(c.Answer), obj, load.FormatRate(c.Limit), len(c.Probes))
	}
	if start := c.Search.Start; c.Answer < start {
		fmt.Fprintf(&b, "; below the start rate %s req/s because %s req/s failed twice: %s", load.FormatRate(start), load.FormatRate(start), c.firstFailure(start))
	}
	if c.Interrupted {
		b.WriteString("; interrupted: the search did not finish")
	}
	if c.GaveUp != "" {
		b.WriteString("; gave up at " + c.GaveUp)
	}
	return b.String()
}

// lowest is the probe at the lowest rate.
func (c *Capacity) lowest() Probe {
	p := c.Probes[0]
	for _, q := range c.Probes {
		if q.Rate < p.Rate {
			p = q
		}
	}
	return p
}

// firstFailure is the reason of the confirmed failure at rate.
func (c *Capacity) firstFailure(rate float64) string {
	for i := len(c.Probes) - 1; i >= 0; i-- {
		if p := c.Probes[i]; p.Rate == rate && p.Verdict == VerdictFailed {
			return p.Reason
		}
	}
	return "it did not meet the objective"
}

// Rates lists the probed rates, ascending, each once: the levels of the search.
func (c *Capacity) Rates() []float64 {
	var out []float64
	for _, p := range c.Probes {
		if !slices.Contains(out, p.Rate) {
			out = append(out, p.Rate)
		}
	}
	slices.Sort(out)
	return out
}
