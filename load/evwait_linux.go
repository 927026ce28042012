//go:build linux

package load

import (
	"math"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

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
		case !o.noGrow && !l.e.stop.Load() && l.e.pool.Load() < int64(l.e.cfg.MaxConns()):
			want = max(o.growAt, o.due+int64(lateThreshold))
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
