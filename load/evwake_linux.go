//go:build linux

package load

import (
	"math"
	"time"
)

// waker is when an open loop wakes: bursts of sends on a grid of quanta, and wake-ups a
// little early for a request due on its own.
type waker struct {
	burst    int64 // the earliest time of the next burst of sends (see openQuantum)
	quantum  int64 // the loop's quantum: openQuantum, or less for a small pool (setQuantum)
	early    int64 // how early the timer wakes the loop, which spins the rest to the due time
	earlyCap int64 // at most this early (0: never)
	wakeLag  int64 // how late the timer's wake-ups come, a moving average
	blocked  bool  // a write waited for room in the socket (the loop waits for it, not a fixed time)
	raw      bool  // short waits keep the thread's P (see rawBlock)
}

// maxBlock bounds a loop's wait, so that it sees a cancellation soon.
const maxBlock = int64(20 * time.Millisecond)

// openQuantum is the shortest time between two bursts of sends of a loop: at high rates the
// requests that fall due in it are sent together, at most openQuantum late (their lag counts
// in the corrected latency), instead of one wake-up of the generator and of the target per
// request. wrk2's bursts come from its millisecond timers. At lower rates (gaps between a
// loop's requests of ownTime or more) every request is sent on its own due time. A loop whose
// pool is small for its rate uses a shorter quantum (see setQuantum). The bursts' size is most
// of the open loop's cost: each wakes the target once (its wake-up is paid in the generator's
// send) and the generator once. At -R 40000 over 50 connections against nginx, a quantum of
// 416 us cost 1.3 times the CPU per request of one of 750 us; 750 us and 833 us cost the same.
// It stays under lateThreshold by a margin for the timer's own lateness, so that a send late
// by design does not count as a late send.
const openQuantum = int64(750 * time.Microsecond)

// ownTime is the gap between a loop's requests from which each is sent on its own due time.
const ownTime = int64(500 * time.Microsecond)

// minQuantum is the shortest quantum a small pool gets.
const minQuantum = int64(50 * time.Microsecond)

// openEarly is how early, at least, the timer wakes a loop for a request, which then spins to
// its due time: a wake-up through the netpoller takes tens to hundreds of microseconds, which
// would be counted as the server's latency. The loop wakes twice as early as its wake-ups
// have been late lately, at least openEarly, at most a tenth of the time between its requests
// (so spinning costs at most a tenth of a CPU), and not at all when they are under a
// millisecond apart (at such rates the wake-ups themselves are what costs, and a request is
// at most openQuantum late).
const openEarly = int64(50 * time.Microsecond)

// setQuantum sizes the loop's quantum to its rate and its pool of conns connections, gap
// apart between the loop's requests. A loop whose requests are at least ownTime apart sends
// each on its own due time. Otherwise a connection sent a request in one burst is read, and
// free again, at the next wake-up at the earliest, so a pool carries at most one burst of its
// size per quantum; the quantum leaves it half as much again: at most two thirds of the pool
// falls due in one (50 connections at 40,000 req/s: 833 us, capped at openQuantum; at 120,000
// req/s: 278 us).
func (w *waker) setQuantum(gap float64, conns int) {
	q := openQuantum
	if gap >= float64(ownTime) {
		q = ownTime
	}
	w.quantum = min(q, max(minQuantum, int64(float64(conns)*gap/1.5)))
}

// woke moves how early the loop wakes by a timer wake-up late by late (not one of a machine
// short of CPU: starveWatch.woke).
func (w *waker) woke(late int64) {
	w.wakeLag += (max(late, 0) - w.wakeLag) / 8
	if w.earlyCap > 0 {
		w.early = min(w.earlyCap, max(openEarly, 2*w.wakeLag))
	}
}

// spins reports whether the loop, woken early on purpose for a request due at due, spins
// the rest of the way to it.
func (w *waker) spins(now, due int64) bool { return w.early > 0 && due > now && due-now <= w.early }

// sendAt is when the loop wakes for a request due at due: a little early, not before the
// next burst.
func (w *waker) sendAt(due int64) int64 { return max(due-w.early, w.burst) }

// holds reports whether the burst due at w.burst is still to wait for, with the next request
// due at due (a loop behind its schedule does not wait for it).
func (w *waker) holds(now, due int64) bool { return now < w.burst && due > now-w.quantum }

// burstSent moves the grid on after a burst sent at now. Bursts keep to a grid of the quantum,
// however late a wake-up came; after a pause (a low rate, an overloaded generator) the grid
// starts again from now. A send ahead of the grid (a loop behind its schedule) does not push
// the grid further out: the next burst is never more than a quantum away.
func (w *waker) burstSent(now int64) {
	w.burst = min(max(w.burst, now-w.quantum)+w.quantum, now+w.quantum)
}

// rawBlock is the longest wait an open loop makes without telling the runtime it blocks.
// A goroutine that blocks in a system call the runtime knows of loses its P after 20 us
// when no other P is idle (sysmon hands it to another thread to poll the network), so every
// short wait cost a handful of thread switches and futex calls. Raw waits up to rawBlock keep
// the P; the loop yields it between waits (runtime.Gosched), and a signal (preemption, GC)
// ends the wait with EINTR. Longer waits, at low rates, go through the runtime as usual. A
// loop waits raw only when the run's process does not serve the target itself (servedHere)
// or has a P to spare: the network poller runs only on an idle P (or every 10 ms).
const rawBlock = int64(time.Millisecond)

// A pause is an open loop's wait, as it tells its backend (poller.pause): the loop decides
// how long and how, the backend only waits.
type pause struct {
	now     int64 // when the wait starts, on the step's clock
	want    int64 // when the loop must wake (math.MaxInt64: no need)
	d       int64 // how long it waits at most: want-now, within [0, maxBlock] (0: not at all)
	through bool  // sleep through arrivals for d (they are stamped), then take every event at once
	raw     bool  // waits up to rawBlock keep the thread's P
}

// A wakeup is what a pause brought, as its backend reports it to the loop.
type wakeup struct {
	parked  bool  // the loop waited (it was idle)
	timed   bool  // it woke for want, late by late
	late    int64 // how late the wake-up for want came
	unstamp bool  // the backend fell back to a wait that cannot sleep through arrivals
}

// woken is what a wait for p that ended at `at` with n events says: the loop parked when it
// slept through arrivals, waited more than 20 us or got nothing, and it woke for p.want, when
// near (within maxBlock), when nothing came or it slept through arrivals.
func (p pause) woken(at int64, n int) wakeup {
	return wakeup{
		parked: p.through || at-p.now > int64(20*time.Microsecond) || n == 0,
		timed:  (p.through || n == 0) && p.want != math.MaxInt64 && p.want-p.now <= maxBlock,
		late:   at - p.now - p.d,
	}
}

// pauseFor is the loop's wait for want: how long, and whether it sleeps through arrivals
// (while requests are in flight and their arrival times are stamped by the kernel, until
// the next send, at most a quantum while none can be sent; never once the loop read an event
// stream, whose events would look simultaneous).
func (o *openLoop) pauseFor(now, want int64) pause {
	d := maxBlock
	if want != math.MaxInt64 {
		d = min(max(want-now, 0), maxBlock)
	}
	starved := o.free.n == 0 && o.ready(now) // due requests wait for a connection
	through := d > 0 && o.stamps && o.busy > 0 && o.dialing == 0 && !starved && !o.writeBlocked() && !o.l.streamed
	if through && (o.over || o.free.n == 0) {
		d = min(d, o.quantum)
	}
	return pause{now: now, want: want, d: d, through: through, raw: o.raw}
}

// waited accounts for what a wait brought.
func (o *openLoop) waited(w wakeup) {
	if w.unstamp {
		o.stampable, o.stamps = false, false
	}
	if w.parked {
		o.parks++
	}
	if w.timed && o.starveWatch.woke(w.late) {
		o.waker.woke(w.late)
	}
}

// writeBlocked reports whether a write of the loop still waits for room in its socket.
func (o *openLoop) writeBlocked() bool {
	if o.blocked {
		o.blocked = false
		for _, c := range o.l.conns {
			if c.out {
				o.blocked = true
				break
			}
		}
	}
	return o.blocked
}

// wake reads the clock after a wait: the step's time, and the wall clock's offset from it,
// which turns the kernel's receive timestamps into the step's time.
func (o *openLoop) wake() int64 {
	t := time.Now()
	now := int64(t.Sub(o.l.e.base))
	o.wall = t.UnixNano() - now
	return now
}

// wakeAt is when the loop must wake next (math.MaxInt64: no need): the next due request
// (when a connection is free to send it), the pool's next growth check (when none is), the
// next deadline scan (while requests are in flight), the samples' next hand-over.
func (o *openLoop) wakeAt() int64 {
	l := o.l
	want := int64(math.MaxInt64)
	if !o.over {
		switch {
		case o.free.n > 0:
			want = o.sendAt(o.due)
		case !o.noGrow && !l.e.stop.Load() && o.shared.size.Load() < int64(l.e.cfg.MaxConns()):
			want = max(o.growAt, o.due+int64(lateThreshold))
		}
		if l.e.to > 0 {
			// The window's end, whatever else: with no connection free, none in flight and
			// none to open (the pool at its cap, its replacements cancelled by the window's
			// end), nothing else would wake the loop to see the window closed.
			want = min(want, int64(l.e.to))
		}
	}
	if o.busy > 0 || o.growing > 0 {
		want = min(want, l.lastScan+l.scan)
	}
	if l.samples.n > 0 {
		want = min(want, l.samples.flushed+maxBatchAge+1)
	}
	return want
}

// interrupt makes the loop's wait through the netpoller return now (the run was cancelled).
func (l *evloop) interrupt() { l.ep.interrupt() }
