//go:build linux

package load

import (
	"math"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// waker is when an open loop wakes: bursts of sends on a grid of quanta, wake-ups a little
// early for a request due on its own, and the timerfd where the loop waits through the
// netpoller.
type waker struct {
	burst    int64 // the earliest time of the next burst of sends (see openQuantum)
	quantum  int64 // the loop's quantum: openQuantum, or less for a small pool (setQuantum)
	early    int64 // how early the timer wakes the loop, which spins the rest to the due time
	earlyCap int64 // at most this early (0: never)
	wakeLag  int64 // how late the timer's wake-ups come, a moving average
	tfd      int   // the timerfd, in the loop's epoll set
	armed    int64 // the wake-up the timerfd is set for (0: not armed)
	expires  int64 // when it is to expire: armed, or when it was set if armed was past
	blocked  bool  // a write waited for room in the socket (the loop waits for it, not a fixed time)
	raw      bool  // short waits keep the thread's P (see rawBlock)
}

// maxBlock bounds a loop's wait in epoll_pwait2, so that it sees a cancellation soon.
const maxBlock = int64(20 * time.Millisecond)

// timerID marks the timerfd's events (connections use their index).
const timerID = -1

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

// setQuantum sizes the loop's quantum to its rate and its pool. A loop whose requests are at
// least ownTime apart sends each on its own due time. Otherwise a connection sent a request in
// one burst is read, and free again, at the next wake-up at the earliest, so a pool carries at
// most one burst of its size per quantum; the quantum leaves it half as much again: at most
// two thirds of the pool falls due in one (50 connections at 40,000 req/s: 833 us, capped at
// openQuantum; at 120,000 req/s: 278 us).
func (l *evloop) setQuantum() {
	o := l.o
	gap := float64(o.step) * float64(time.Second) / l.e.cfg.Rate // between the loop's requests
	q := openQuantum
	if gap >= float64(ownTime) {
		q = ownTime
	}
	o.quantum = min(q, max(minQuantum, int64(float64(len(l.conns))*gap/1.5)))
}

// woke notes how late a timer wake-up came.
func (o *openLoop) woke(late int64) {
	o.wakes++
	if late > int64(starvedWait) {
		o.slow++
		return // not counted in the average: the machine was short of CPU
	}
	o.wakeLag += (max(late, 0) - o.wakeLag) / 8
	if o.earlyCap > 0 {
		o.early = min(o.earlyCap, max(openEarly, 2*o.wakeLag))
	}
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

// sleepNs sleeps d nanoseconds, raw (keeping the thread's P) as epollPwait2 does; a signal
// cuts it short.
func sleepNs(d int64, raw bool) {
	ts := unix.NsecToTimespec(d)
	if raw && d <= rawBlock {
		syscall.RawSyscall(unix.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
		return
	}
	syscall.Syscall(unix.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
}

// waitFor is how long the loop waits for want, and whether it sleeps through arrivals
// (timed): while requests are in flight and their arrival times are stamped by the kernel,
// until the next send, at most a quantum while none can be sent.
func (l *evloop) waitFor(now, want int64) (d int64, timed bool) {
	o := l.o
	d = maxBlock
	if want != math.MaxInt64 {
		d = min(max(want-now, 0), maxBlock)
	}
	starved := o.free.n == 0 && !o.over && o.due <= now // due requests wait for a connection
	timed = d > 0 && o.stamps && o.busy > 0 && o.dialing == 0 && !starved && !l.writeBlocked()
	if timed && (o.over || o.free.n == 0) {
		d = min(d, o.quantum)
	}
	return d, timed
}

// waited accounts for a wait from now to after that was to last d and brought n events.
func (l *evloop) waited(now, after, want, d int64, timed bool, n int) {
	o := l.o
	if timed || after-now > int64(20*time.Microsecond) || n == 0 {
		o.parks++
	}
	if (timed || n == 0) && want != math.MaxInt64 && want-now <= maxBlock {
		o.woke(after - now - d)
	}
}

// writeBlocked reports whether a write of the loop still waits for room in its socket.
func (l *evloop) writeBlocked() bool {
	o := l.o
	if o.blocked {
		o.blocked = false
		for _, c := range l.conns {
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
func (l *evloop) wake() int64 {
	t := time.Now()
	now := int64(t.Sub(l.e.base))
	l.o.wall = t.UnixNano() - now
	return now
}

// wakeAt is when the loop must wake next (math.MaxInt64: no need): the next due request
// (when a connection is free to send it), the pool's next growth check (when none is), the
// next deadline scan (while requests are in flight), the samples' next hand-over.
func (l *evloop) wakeAt() int64 {
	o := l.o
	want := int64(math.MaxInt64)
	if !o.over {
		switch {
		case o.free.n > 0:
			want = max(o.due-o.early, o.burst)
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

// arm sets the timerfd for want (math.MaxInt64: leaves it).
func (l *evloop) arm(now, want int64) {
	o := l.o
	if want == math.MaxInt64 || want == o.armed {
		return
	}
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(max(want-now, 1))} // zero would disarm it
	if unix.TimerfdSettime(o.tfd, 0, &spec, nil) == nil {
		o.armed, o.expires = want, max(want, now)
	}
}

// interrupt makes the loop's wait through the netpoller return now (the run was cancelled).
func (l *evloop) interrupt() { l.ep.interrupt() }

// timerFired notes the timerfd's expiry: how late it woke the loop.
func (l *evloop) timerFired() {
	o := l.o
	if o.armed > 0 {
		o.woke(l.e.now() - o.expires)
	}
	o.armed = 0
}
