package load

import (
	"fmt"
	"time"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
)

// finish combines what was recorded. The window ends when sending stopped (the duration, or
// an interruption); when every request was done before that, with the last attempt.
func (e *engine) finish(names []string) *measure.Step {
	end := time.Duration(e.cut.Load())
	if end == 0 {
		end = time.Duration(e.drv.lastDone())
	}
	e.stream.Close(e.emit)
	s := e.stream.Step(e.base.Add(e.from), max(end-e.from, 0), names)
	s.Concurrency = e.cfg.Connections
	if s.Streams != nil {
		s.Streams.Kind = e.streamKind()
	}
	s.Connects, s.ConnectTime = e.conns.Load(), measure.Duration(e.connTime.Load())
	s.Generator = generator(e.usage0, readUsage())
	s.GeneratorLimit = e.generatorLimit()
	if e.cfg.OpenLoop() {
		s.Open = &measure.OpenLoop{
			TargetRate:  e.cfg.Rate,
			LateSends:   e.lateSend.Load(),
			MaxLag:      measure.Duration(e.maxLag.Load()),
			Connections: int(e.conns.Load()),
		}
	}
	if w := e.drv.warning(); w != "" {
		s.Warnings = append(s.Warnings, w)
	}
	if w := e.dial.tlsErr.warning(); w != "" {
		s.Warnings = append(s.Warnings, w)
		s.Failure = &measure.Failure{Kind: measure.FailureTLS, Reason: w}
	}
	e.reach.atEnd(e)
	if w := e.reach.warning(); w != "" {
		// "unable to connect to ADDR: connection refused" or "no TLS connection"
		w += " (no connection opened in " + DefaultConnectGrace.String() + "); stopped"
		s.Warnings = append(s.Warnings, w)
		if e.reach.unreachable() {
			s.Failure = &measure.Failure{Kind: measure.FailureUnreachable, Reason: w}
		}
	}
	if n := e.longLine.Load(); n > 0 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("the target sent a header line longer than %d KiB, more than apiperf reads of one line of a response's head: protocol errors (%d responses)",
			maxHeaderLine>>10, n))
	}
	if e.cancel.Load() {
		s.Interrupted = true
		s.Warnings = append(s.Warnings, "interrupted: the run was stopped early; the numbers cover what was measured until then")
	}
	if b, ok := e.src.(scenario.Busy); ok {
		if w := busyWarning(b.Busy()-e.busy0, time.Since(e.base), e.cfg.Threads); w != "" {
			s.Warnings = append(s.Warnings, w)
		}
	}
	if e.srcErr != nil {
		s.Warnings = append(s.Warnings, fmt.Sprintf("stopped early: %v", e.srcErr))
	}
	if n := e.stopped.Load(); n > 0 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("the script stopped %d of %d threads (wrk.thread:stop()); they sent nothing more", n, e.cfg.Threads))
	}
	return s
}

// openCounts records an open loop's schedule in s: scheduled requests due inside the window
// and sent attempts started inside it, as the driver counted them. A window that ended
// (its duration, or an interruption) had every request due before its end scheduled, sent
// or not: what was not sent is the generator's shortfall, never sent after the window.
func (e *engine) openCounts(s *measure.Step, scheduled, sent int64) {
	s.Open.Sent = sent
	s.Open.Scheduled = scheduled
	if end := time.Duration(e.cut.Load()); end > 0 {
		s.Open.Scheduled = e.dueBefore(end) - e.dueBefore(e.from)
	}
}

// dueBefore is how many requests of the open loop's schedule are due before t.
func (e *engine) dueBefore(t time.Duration) int64 {
	n := Pacer{Rate: e.cfg.Rate}.Count(t - 1)
	if e.cfg.Requests > 0 {
		n = min(n, e.cfg.Requests)
	}
	return n
}

// busyWarning says when a script's request() and response() took most of the run's time on
// its threads (busy, summed over threads, of wall each): the script, not the target, set the
// pace (a request() that stalls, a response() that does heavy work).
func busyWarning(busy, wall time.Duration, threads int) string {
	if wall <= 0 || threads < 1 {
		return ""
	}
	share := float64(busy) / float64(threads) / float64(wall)
	if share <= 0.5 {
		return ""
	}
	return fmt.Sprintf("the script's request() and response() ran for %.0f%% of the run (%v of %v on each of %d threads, on average): the script, not the target, set the pace",
		100*min(share, 1), (busy / time.Duration(threads)).Round(time.Millisecond), wall.Round(time.Millisecond), threads)
}
