package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
)

// plan is each member's load of cfg: its exact share (Split) on its own cores, with no more
// threads than connections.
func (c *Coordinator) plan(cfg load.Config) ([]load.Config, error) {
	shares, err := Split(cfg, len(c.members))
	if err != nil {
		return nil, err
	}
	for k, m := range c.members {
		shares[k].Threads = m.cores
		shares[k] = shares[k].WithConnections(shares[k].Connections)
	}
	return shares, nil
}

// Threads is how many threads the workers run cfg on, all together (0 when cfg cannot be
// split over them).
func (c *Coordinator) Threads(cfg load.Config) int {
	shares, err := c.plan(cfg)
	if err != nil {
		return 0
	}
	n := 0
	for _, s := range shares {
		n += s.Threads
	}
	return n
}

// Step runs cfg across the workers: it splits it (Split), measures each worker's clock,
// sends every worker its plan with a common start, and merges the final steps exactly
// (measure.Step.Merge), each moved to the coordinator's clock. A worker lost during the
// step is named in a warning with when and what it had done; its streamed intervals are
// kept in the merge and the step is marked interrupted (Partial reports it). When ctx ends
// the workers are told to stop and their steps are still merged.
func (c *Coordinator) Step(ctx context.Context, cfg load.Config) (*measure.Step, error) {
	if len(c.members) != c.o.Workers {
		return nil, errors.New("cluster: Step before every worker joined")
	}
	if len(c.lost) > 0 {
		return nil, fmt.Errorf("cluster: a worker was lost earlier: %s", c.lost[0])
	}
	shares, err := c.plan(cfg)
	if err != nil {
		return nil, err
	}
	phases := Offsets(cfg, len(c.members))
	if err := c.syncClocks(ctx); err != nil {
		return nil, err
	}
	var maxRTT time.Duration
	for _, m := range c.members {
		maxRTT = max(maxRTT, m.rtt)
	}
	start := time.Now().Add(max(startLead, 4*maxRTT))
	for k, m := range c.members {
		share := shares[k]
		m.share, m.phase, m.step, m.cond, m.intervals, m.lostAt = share, time.Duration(phases[k]), nil, nil, nil, 0
		p := &Plan{
			Worker: k, Workers: len(c.members), Scenario: c.job.Scenario, ScriptCode: c.job.ScriptCode,
			ScriptArgs: c.job.ScriptArgs, Encoded: c.job.Encoded, Load: share, Expected: c.job.Expected,
			StartAt: start.Add(m.offset + m.phase), Offset: phases[k],
		}
		if err := m.c.send(&message{Type: msgPlan, Plan: p}, 5*time.Second); err != nil {
			c.lose(m, start, err)
		}
	}
	fmt.Fprintf(c.o.Log, "apiperf: %d workers start at %s\n", len(c.members), start.Format("15:04:05.000"))
	if err := c.collect(ctx, cfg, start); err != nil {
		return nil, err
	}
	c.keepHealth()
	return c.merge(cfg)
}

// stopGraceDefault is how long, beyond the request timeout, the workers get to send what
// they measured once told to stop.
const stopGraceDefault = 5 * time.Second

// stepGrace and stopGrace are the graces in force (tests shorten them).
var stepGrace, stopGrace = stepGraceDefault, stopGraceDefault

// collect waits for every worker's final step or loss, checking each message against the
// worker's share (a worker that breaks it is dropped, as if lost). Every wait has a
// deadline: the step's planned end plus its timeout and a grace, or for a count-bounded
// step an interval at least every stepGrace. When ctx ends it tells the workers to stop
// (once) and waits at most the timeout and stopGrace for what they measured.
func (c *Coordinator) collect(ctx context.Context, cfg load.Config, start time.Time) error {
	pending := 0
	for _, m := range c.members {
		m.lim = newLimits(m, len(c.members), start)
		m.heard = m.lim.start.Add(time.Duration(cfg.Warmup))
		if m.gone == nil {
			pending++
		}
	}
	var live *liveMerge
	if c.o.Intervals != nil {
		live = newLiveMerge(len(c.members), c.o.Intervals)
		for _, m := range c.members {
			if m.gone != nil {
				live.end(m.index)
			}
		}
	}
	drop := func(m *member, err error) {
		c.lose(m, start, err)
		pending--
		live.end(m.index)
	}
	var stopBy time.Time
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	done := ctx.Done()
	for pending > 0 {
		select {
		case <-done:
			done = nil
			wait := time.Duration(cfg.Timeout) + stopGrace
			stopBy = time.Now().Add(wait)
			fmt.Fprintf(c.o.Log, "apiperf: stopping the workers; waiting up to %v for what they measured\n", wait)
			for _, m := range c.members {
				if m.gone == nil && m.step == nil {
					m.c.send(&message{Type: msgStop}, time.Second)
				}
			}
		case now := <-tick.C:
			for _, m := range c.members {
				if m.gone != nil || m.step != nil {
					continue
				}
				if err := m.overdue(now, stopBy); err != nil {
					drop(m, err)
				}
			}
		case ev, ok := <-c.events:
			if !ok {
				return errors.New("cluster: coordinator closed")
			}
			m := c.members[ev.k]
			if m.gone != nil || m.step != nil {
				continue
			}
			now := time.Now()
			switch {
			case ev.m == nil:
				drop(m, m.c.err)
			case ev.m.Type == msgInterval && ev.m.Interval != nil:
				if err := m.lim.checkInterval(m, ev.m.Interval, now); err != nil {
					drop(m, err)
					continue
				}
				m.heard = now
				m.intervals = append(m.intervals, ev.m.Interval)
				shown := *ev.m.Interval
				shown.StepStart = shown.StepStart.Add(-m.offset)
				live.add(m.index, &shown)
			case ev.m.Type == msgStep && ev.m.Step != nil:
				err := m.lim.checkStep(ev.m.Step, now)
				if err == nil {
					err = m.lim.checkConditions(ev.m.Conditions, ev.m.Step.Elapsed)
				}
				if err != nil {
					drop(m, err)
					continue
				}
				m.step, m.cond = ev.m.Step, ev.m.Conditions
				pending--
				live.end(m.index)
			case ev.m.Type == msgFailed:
				drop(m, fmt.Errorf("its step failed: %s", Printable(ev.m.Error, maxWarning)))
			}
		}
	}
	return nil
}

// overdue says why worker m, still running, is too late at now (nil: it is not): past the
// step's deadline, silent for longer than an interval and stepGrace, or past stopBy.
func (m *member) overdue(now, stopBy time.Time) error {
	switch d := m.lim.deadline(); {
	case !stopBy.IsZero() && now.After(stopBy):
		return errors.New("no step in time after it was told to stop")
	case !d.IsZero() && now.After(d):
		return fmt.Errorf("no step by %v after the step's planned end", (stepGrace + m.lim.slack).Round(time.Millisecond))
	case now.Sub(m.heard) > measure.DefaultInterval+stepGrace+m.lim.slack:
		return fmt.Errorf("no interval for %v", now.Sub(m.heard).Round(time.Second))
	}
	return nil
}

// lose records that m was lost, with when and what it had done, and closes its connection.
func (c *Coordinator) lose(m *member, start time.Time, err error) {
	if err == nil {
		err = errors.New("connection closed")
	}
	m.gone = err
	m.lostAt = time.Since(start)
	var done int64
	for _, iv := range m.intervals {
		done += iv.Requests
	}
	verb, kept := "lost", fmt.Sprintf("after %d responses in %d intervals", done, len(m.intervals))
	if errors.Is(err, errForged) {
		verb, kept = "dropped", fmt.Sprintf("nothing of it merged (%d responses in %d intervals before)", done, len(m.intervals))
		m.intervals = nil
	}
	line := fmt.Sprintf("worker %d (%s, %s) %s %s, %s: %v", m.index+1, m.host, m.addr, verb, m.lostWhen(), kept, err)
	c.lost = append(c.lost, line)
	fmt.Fprintf(c.o.Log, "apiperf: %s\n", line)
	m.c.nc.Close()
}

// lostWhen says when m was lost: "1.2s into the step", or "495ms before the step's start".
func (m *member) lostWhen() string {
	if m.lostAt < 0 {
		return fmt.Sprintf("%v before the step's start", (-m.lostAt).Round(time.Millisecond))
	}
	return fmt.Sprintf("%v into the step", m.lostAt.Round(time.Millisecond))
}

// syncClocks measures each worker's clock offset and round trip, NTP-style: the
// coordinator sends T0, the worker answers with its clock T1, the answer arrives at T2;
// offset = T1 - (T0+T2)/2. The exchange with the shortest round trip is kept.
func (c *Coordinator) syncClocks(ctx context.Context) error {
	for _, m := range c.members {
		m.rtt = -1
	}
	for range syncRounds {
		t0 := time.Now()
		for _, m := range c.members {
			if err := m.c.send(&message{Type: msgPing, T0: t0.UnixNano()}, 2*time.Second); err != nil {
				return fmt.Errorf("clock sync with worker %d: %w", m.index+1, err)
			}
		}
		got := 0
		timeout := time.After(5 * time.Second)
		for got < len(c.members) {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-timeout:
				return fmt.Errorf("clock sync: %d of %d workers answered within 5s", got, len(c.members))
			case ev, ok := <-c.events:
				if !ok {
					return errors.New("cluster: coordinator closed")
				}
				m := c.members[ev.k]
				if ev.m == nil {
					return fmt.Errorf("clock sync: worker %d (%s) lost: %v", m.index+1, m.host, m.c.err)
				}
				if ev.m.Type != msgPong || ev.m.T0 != t0.UnixNano() {
					continue
				}
				t2 := time.Now()
				rtt := t2.Sub(t0)
				if m.rtt < 0 || rtt < m.rtt {
					mid := t0.UnixNano() + int64(rtt)/2
					m.rtt, m.offset = rtt, time.Duration(ev.m.T1-mid)
				}
				got++
			}
		}
	}
	for _, m := range c.members {
		if m.offset > maxOffset || m.offset < -maxOffset {
			return fmt.Errorf("clock sync: worker %d (%s) has a clock %v off the coordinator's (more than %v)", m.index+1, m.host, m.offset, maxOffset)
		}
	}
	return nil
}

// maxOffset bounds the clock difference between a worker and the coordinator.
const maxOffset = 24 * time.Hour

// merge moves each worker's step to the coordinator's clock and merges them exactly; a
// lost worker's streamed intervals count as its step.
func (c *Coordinator) merge(cfg load.Config) (*measure.Step, error) {
	var merged *measure.Step
	var lo, hi time.Time // latest start and earliest end: the windows overlap when lo < hi
	var behind []string
	for _, m := range c.members {
		w, short := m.behind()
		if w == "" {
			continue
		}
		behind = append(behind, w)
		if short {
			c.short = append(c.short, w)
		}
	}
	for _, m := range c.members {
		s := m.step
		if s == nil {
			s = fromIntervals(m.intervals)
			if s == nil {
				continue
			}
		}
		s.Start = s.Start.Add(-m.offset)
		if end := s.Start.Add(time.Duration(s.Elapsed)); hi.IsZero() || end.Before(hi) {
			hi = end
		}
		if lo.IsZero() || s.Start.After(lo) {
			lo = s.Start
		}
		if merged == nil {
			merged = s.Clone()
			continue
		}
		merged.Merge(s)
	}
	if merged == nil {
		return nil, fmt.Errorf("cluster: no worker measured anything: %v", c.lost)
	}
	// Duration-bounded windows share one length, so a common start makes them overlap; a
	// count-bounded (-n) share may legitimately end before another worker's begins.
	if cfg.Requests == 0 && !lo.Before(hi) && len(c.lost) == 0 {
		return nil, fmt.Errorf("cluster: the workers' measured windows do not overlap (latest start %s, earliest end %s): not merging",
			lo.Format("15:04:05.000"), hi.Format("15:04:05.000"))
	}
	merged.Concurrency = cfg.Connections
	merged.Warnings = append(append(merged.Warnings, behind...), c.healthWarnings()...)
	if len(c.lost) > 0 {
		merged.Interrupted = true
		merged.Warnings = append(merged.Warnings, c.lost...)
	}
	return merged, nil
}

// fromIntervals rebuilds what a lost worker measured from the intervals it streamed:
// counts, errors, statuses, latency and streams (measure.Streams: messages, fewest and most
// per stream, time to first message and gaps) are exact up to its last interval (nil: none).
func fromIntervals(ivs []*measure.Interval) *measure.Step {
	if len(ivs) == 0 {
		return nil
	}
	s := &measure.Step{Start: ivs[0].StepStart, Latency: measure.NewHistogram(), Interrupted: true}
	for _, iv := range ivs {
		s.Attempts += iv.Attempts
		s.Requests += iv.Requests
		s.Successes += iv.Successes
		s.Bytes += iv.Bytes
		s.Errors.Add(iv.Errors)
		s.Status = measure.AddStatus(s.Status, iv.Status)
		if iv.Latency != nil {
			s.Latency.Merge(iv.Latency)
		}
		if iv.Uncorrected != nil {
			if s.Uncorrected == nil {
				s.Uncorrected = measure.NewHistogram()
			}
			s.Uncorrected.Merge(iv.Uncorrected)
		}
		s.Streams = s.Streams.Merge(iv.Streams)
		s.Timeline = append(s.Timeline, iv.Second())
		s.Elapsed = iv.Start + iv.Length
	}
	s.Finish()
	return s
}

// behind says how worker m fell behind its share in the last step ("" when it did not): a
// request count it did not reach (then the run is partial), or an open-loop schedule it
// kept late for over a tenth of its sends.
func (m *member) behind() (warning string, short bool) {
	s := m.step
	if s == nil || m.gone != nil || s.Interrupted {
		return "", false
	}
	name := fmt.Sprintf("worker %d (%s, %s)", m.index+1, m.host, m.addr)
	if m.share.Requests > 0 && m.share.Duration == 0 && s.Attempts < m.share.Requests {
		return fmt.Sprintf("%s fell behind its share: %d of its %d requests attempted", name, s.Attempts, m.share.Requests), true
	}
	if o := s.Open; o != nil && o.Scheduled > 0 && o.LateSends*10 > o.Scheduled {
		return fmt.Sprintf("%s fell behind its share: %d of %d sends over 1ms late (max lag %v)", name, o.LateSends, o.Scheduled, o.MaxLag.Duration()), false
	}
	return "", false
}
