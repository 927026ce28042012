//go:build linux

package load

import (
	"context"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A clock wakes open-loop workers when their requests are due, precisely. Go's timers sleep
// in epoll_wait, whose timeout has millisecond granularity: on an idle generator a request
// due in 300 us is sent about 1 ms later, and the corrected latency counts the generator's
// wake-up as the server's. A timerfd expires on a kernel high-resolution timer and makes the
// netpoller return at once, so a worker wakes within microseconds of its due time at no CPU
// cost (no spinning). One timerfd serves every worker of a run, armed for the earliest due
// time among the waiting ones.
type clock struct {
	e     *engine
	fd    int      // the timerfd
	file  *os.File // fd, read through Go's netpoller (never call its Fd: that makes it blocking)
	mu    sync.Mutex
	q     []waiter // a min-heap by wake-up time
	armed int64    // the wake-up time the timerfd is set for; 0: disarmed
	done  chan struct{}
	// early is how early a worker is woken before its due time (clockEarly to cap), moved by
	// wakeLag, how late the wake-ups came lately (a moving average, updated by the woken
	// workers without the lock: a lost update only slows the average down).
	early, cap int64
	wakeLag    atomic.Int64
}

// clockEarly is how early, at least, the clock wakes a worker: the wake-up itself (the kernel
// scheduling the netpoller's thread, the Go scheduler running the clock's goroutine and then
// the worker) takes tens of microseconds, and the worker spends what is left spinning to its
// due time, unless the generator is short of CPU. Measured on loopback at 500 req/s (p50 of
// due-to-send): Go timers 670-830 us, the timerfd alone 77-91 us, with 50 us early 18-39 us,
// with 100 us early 1 us. Where wake-ups come later (a virtual machine whose idle vCPU is slow
// to wake: 170-180 us on one CI runner, so 100 us early left a send lag of 70-80 us), the
// clock wakes twice as early as its wake-ups have been late lately, as an event loop does
// (waker.woke), at most clockEarlyCap.
const clockEarly = int64(100 * time.Microsecond)

// clockEarlyCap bounds how early the clock wakes a worker for a run at rate requests per
// second: what the workers spin costs at most a tenth of each of the generator's CPUs, and
// never more than a millisecond a request.
func clockEarlyCap(rate float64) int64 {
	if rate <= 0 {
		return clockEarly
	}
	spin := float64(runtime.GOMAXPROCS(0)) * float64(time.Second) / (10 * rate)
	return min(int64(time.Millisecond), max(clockEarly, int64(spin)))
}

type waiter struct {
	at   int64 // when to wake the waiter: its due time less the clock's early
	wake chan struct{}
}

// newClock starts the clock's goroutine; close ends it. A nil clock (no timerfd) makes
// workers fall back on Go timers.
func newClock(e *engine) *clock {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil
	}
	c := &clock{e: e, fd: fd, file: os.NewFile(uintptr(fd), "timerfd"), done: make(chan struct{}), early: clockEarly, cap: clockEarlyCap(e.cfg.Rate)}
	go c.run()
	return c
}

func (c *clock) close() {
	if c == nil {
		return
	}
	c.file.Close() // the read in run returns
	<-c.done
}

// run wakes the waiters whose time has come each time the timerfd expires.
func (c *clock) run() {
	defer close(c.done)
	var buf [8]byte
	for {
		if _, err := c.file.Read(buf[:]); err != nil {
			if err == syscall.EAGAIN || err == syscall.EINTR {
				continue
			}
			return // closed
		}
		c.mu.Lock()
		c.armed = 0
		now := c.e.now()
		for len(c.q) > 0 && c.q[0].at <= now {
			w := c.pop()
			select {
			case w.wake <- struct{}{}:
			default:
			}
		}
		if len(c.q) > 0 {
			c.arm(c.q[0].at, now)
		}
		c.mu.Unlock()
	}
}

// arm sets the timerfd to expire at at (an offset from the step's start); now is the
// current offset. The caller holds c.mu.
func (c *clock) arm(at, now int64) {
	d := max(at-now, 1) // a zero value would disarm it
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(d)}
	if err := unix.TimerfdSettime(c.fd, 0, &spec, nil); err == nil {
		c.armed = at
	}
}

// wait blocks until due (an offset from the step's start) or until ctx ends; wake is the
// caller's own channel (capacity 1). It reports whether due was reached.
func (c *clock) wait(ctx context.Context, due int64, wake chan struct{}) bool {
	select {
	case <-wake: // a wake-up left over from a wait that ctx ended
	default:
	}
	c.mu.Lock()
	now := c.e.now()
	if lag := c.wakeLag.Load(); c.cap > clockEarly {
		c.early = min(c.cap, max(clockEarly, 2*lag))
	}
	at := due - c.early
	if at <= now {
		c.mu.Unlock()
		c.spin(due)
		return true
	}
	c.push(waiter{at: at, wake: wake})
	if c.armed == 0 || at < c.armed {
		c.arm(at, now)
	}
	c.mu.Unlock()
	select {
	case <-wake:
		c.woke(c.e.now() - at)
		c.spin(due)
		return true
	case <-ctx.Done():
		return false
	}
}

// woke moves how late the clock's wake-ups come by one late by late; one over starvedWait
// late is the machine's shortage of CPU, not the wake-up's cost, and does not count.
func (c *clock) woke(late int64) {
	if late < 0 || late > int64(starvedWait) {
		return
	}
	lag := c.wakeLag.Load()
	c.wakeLag.Store(lag + (late-lag)/8)
}

// spin waits the last microseconds to due, yielding to other goroutines; not at all when
// the generator is short of CPU.
func (c *clock) spin(due int64) {
	for !c.e.starved.Load() && c.e.now() < due {
		runtime.Gosched()
	}
}

func (c *clock) push(w waiter) {
	c.q = append(c.q, w)
	for i := len(c.q) - 1; i > 0; {
		p := (i - 1) / 2
		if c.q[p].at <= c.q[i].at {
			break
		}
		c.q[p], c.q[i] = c.q[i], c.q[p]
		i = p
	}
}

func (c *clock) pop() waiter {
	top := c.q[0]
	n := len(c.q) - 1
	c.q[0] = c.q[n]
	c.q = c.q[:n]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && c.q[l].at < c.q[m].at {
			m = l
		}
		if r < n && c.q[r].at < c.q[m].at {
			m = r
		}
		if m == i {
			break
		}
		c.q[m], c.q[i] = c.q[i], c.q[m]
		i = m
	}
	return top
}
