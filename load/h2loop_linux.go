//go:build linux

package load

import (
	"iter"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// HTTP/2 on the event loops. Each engine thread's HTTP/2 connections run on one loop (h2loop):
// the loop waits for its sockets in epoll and for their timers in a heap, and each connection's
// code (h2conn, the same code the goroutine path runs) runs as a coroutine (iter.Pull) that
// the loop resumes when its socket is ready or its deadline comes. The connection reads and
// writes through loopConn, a net.Conn over its non-blocking socket whose Read and Write give
// the loop back its turn (yield) when the socket would block, as the TLS handshake's memConn
// does (evtls_linux.go). So no connection waits in Go's netpoller: the loop's one wait
// serves them all, and where the loop may keep its P (h2KeepP) that wait does not go through
// the scheduler, which spares the runtime the hand-off of an idle P and the monitor thread's
// wake-ups that a process of parked goroutines pays each time it goes idle
// (docs/PERFORMANCE.md, "where HTTP/2's generator CPU goes").
//
// Connecting is the dialer's (a goroutine per connect, the loop told when it is done), and
// h2 over TLS shakes hands in the coroutine over the loopConn, so that a handshake's
// waits are the loop's too. APIPERF_IO=goroutines keeps HTTP/2 on a goroutine per connection.

// h2loopSupported says the event loops can run HTTP/2 here.
const h2loopSupported = true

// h2LoopCoros counts the connections started on HTTP/2 loops (tests check the path taken).
var h2LoopCoros atomic.Int64

// h2loop is one engine thread's HTTP/2 event loop.
type h2loop struct {
	e       *engine
	epfd    int
	efd     int  // eventfd: wakes the loop for what other goroutines hand it (inbox)
	hold    bool // its waits may keep the P (h2KeepP)
	ref     time.Time
	view    []*h2coro // the coroutines by slot, as the loop last saw them
	runq    []*h2coro
	timers  h2timers
	events  []syscall.EpollEvent
	live    int // coroutines started and not ended
	dialing int // coroutines waiting for a dial
	pwait2  bool
	yielded int64 // when a held loop last yielded its P (the loop's clock)

	mu     sync.Mutex // guards slots, inbox and sealed
	slots  []*h2coro
	inbox  []*h2coro // started by other goroutines, or whose dial is done
	sealed bool      // no more coroutines will be started: the loop ends when none is live
	woken  atomic.Bool
}

// h2coro is one connection's coroutine on a loop.
type h2coro struct {
	l       *h2loop
	slot    int32
	next    func() (struct{}, bool)
	stop    func()
	yield   func(struct{}) bool
	body    func() // what the coroutine runs: the connection's loop
	done    func() // called once it has ended
	want    uint8  // what it waits for (h2Want*); 0: running, or runnable
	until   int64  // when its wait ends anyway, on the loop's clock (0: never)
	armed   int64  // the timer the heap holds for it (0: none)
	queued  bool   // in the run queue
	started bool
	dial    dialResult // a dial's result, handed over by the dialing goroutine
}

const (
	h2WantRead uint8 = 1 + iota
	h2WantWrite
	h2WantDial
	h2WantTime
)

// h2loopMaxWait bounds a loop's wait, so that the end of the run is seen.
const h2loopMaxWait = int64(10 * time.Millisecond)

// makeH2Loops makes one loop per engine thread.
func (e *engine) makeH2Loops() ([]*h2loop, error) {
	loops := make([]*h2loop, len(e.recs))
	port, _ := strconv.Atoi(e.target.Port)
	// As the io_uring loops (keepP): the waits keep their Ps when every loop has a P of its
	// own and a P is left for the network poller or the target is not served by this process.
	procs := runtime.GOMAXPROCS(0)
	hold := len(loops) <= procs && (procs > len(loops) || !servedHere(port))
	for i := range loops {
		l, err := newH2Loop(e, hold)
		if err != nil {
			closeH2Loops(loops[:i])
			return nil, err
		}
		loops[i] = l
	}
	return loops, nil
}

func newH2Loop(e *engine, hold bool) (*h2loop, error) {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		syscall.Close(epfd)
		return nil, os.NewSyscallError("eventfd", err)
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | unix.EPOLLET, Fd: -1}
	if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, efd, &ev); err != nil {
		syscall.Close(epfd)
		syscall.Close(efd)
		return nil, os.NewSyscallError("epoll_ctl", err)
	}
	return &h2loop{e: e, epfd: epfd, efd: efd, hold: hold, ref: time.Now(), events: make([]syscall.EpollEvent, 128), pwait2: true}, nil
}

func closeH2Loops(loops []*h2loop) {
	for _, l := range loops {
		syscall.Close(l.epfd)
		syscall.Close(l.efd)
	}
}

// now is the loop's clock (its own: the engine's base moves when the run's clock starts).
func (l *h2loop) now() int64 { return int64(time.Since(l.ref)) }

// at converts a deadline to the loop's clock (0: none; one already passed is 1).
func (l *h2loop) at(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return max(int64(t.Sub(l.ref)), 1)
}

// coro makes a connection's coroutine on this loop: body runs in it once started, done
// after it ends.
func (l *h2loop) coro(body, done func()) *h2coro {
	l.mu.Lock()
	defer l.mu.Unlock()
	co := &h2coro{l: l, slot: int32(len(l.slots)), body: body, done: done}
	l.slots = append(l.slots, co)
	return co
}

// start hands co to its loop (from any goroutine).
func (co *h2coro) start() { co.l.hand(co) }

// hand puts co in the loop's inbox and wakes the loop.
func (l *h2loop) hand(co *h2coro) {
	l.mu.Lock()
	l.inbox = append(l.inbox, co)
	l.mu.Unlock()
	l.wake()
}

// seal says no more coroutines will be started: the loop ends once its live ones have.
func (l *h2loop) seal() {
	l.mu.Lock()
	l.sealed = true
	l.mu.Unlock()
	l.wake()
}

func (l *h2loop) wake() {
	if l.woken.Swap(true) {
		return
	}
	one := uint64(1)
	_, _ = syscall.Write(l.efd, (*[8]byte)(unsafe.Pointer(&one))[:])
}

// run is the loop: resume what is runnable, wait for sockets and timers, until every
// coroutine has ended and no more will come. It closes the loop's descriptors at the end.
func (l *h2loop) run() {
	defer closeH2Loops([]*h2loop{l})
	for !l.takeInbox() {
		l.resume()
		if l.e.cancel.Load() {
			// The run was cut short: every wait ends now (the connections' deadlines
			// were set in the past), but a dial's, which its context ends.
			for _, co := range l.view {
				if co.want != 0 && co.want != h2WantDial {
					l.ready(co)
				}
			}
			if len(l.runq) > 0 {
				continue
			}
		}
		if l.hold {
			if now := l.now(); now-l.yielded >= rawBlock {
				// The loop keeps its P: let the run's other goroutines in, and run the
				// timers this P holds (the open loop's pool growth, the run's end), at
				// least every rawBlock while it is busy (an idle loop waits up to
				// h2loopMaxWait).
				runtime.Gosched()
				l.yielded = now
			}
		}
		l.wait()
	}
}

// takeInbox starts the coroutines handed to the loop and readies those whose dial is done;
// it reports whether the loop is over.
func (l *h2loop) takeInbox() bool {
	if !l.woken.Load() && len(l.runq) == 0 && l.live > 0 {
		return false
	}
	l.woken.Store(false)
	l.mu.Lock()
	in, sealed := l.inbox, l.sealed
	l.inbox = nil
	l.view = l.slots
	l.mu.Unlock()
	for _, co := range in {
		if !co.started {
			co.started = true
			l.live++
			h2LoopCoros.Add(1)
			co.next, co.stop = iter.Pull(co.run)
		} else if co.want == h2WantDial {
			l.dialing--
		}
		co.want = 0
		l.ready(co)
	}
	return sealed && l.live == 0 && len(l.runq) == 0
}

func (l *h2loop) ready(co *h2coro) {
	if co.queued {
		return
	}
	co.queued = true
	l.runq = append(l.runq, co)
}

// resume runs each runnable coroutine until it waits again or ends.
func (l *h2loop) resume() {
	for len(l.runq) > 0 {
		q := l.runq
		l.runq = q[len(q):]
		for i, co := range q {
			q[i] = nil
			co.queued = false
			co.want = 0
			if _, more := co.next(); !more {
				l.live--
				co.done()
			}
		}
		if len(l.runq) == 0 {
			l.runq = q[:0] // its array is free again
		}
	}
}

// wait waits for sockets until the next timer (at most h2loopMaxWait), then readies the
// coroutines whose socket or timer is due.
func (l *h2loop) wait() {
	d := h2loopMaxWait
	if len(l.timers) > 0 {
		d = min(d, max(l.timers[0].at-l.now(), 0))
	}
	n := l.epollWait(d)
	for _, ev := range l.events[:n] {
		if ev.Fd < 0 {
			var b [8]byte
			_, _ = syscall.Read(l.efd, b[:])
			continue
		}
		if int(ev.Fd) >= len(l.view) {
			continue // not yet seen (its coroutine is in the inbox: it will try its socket)
		}
		co := l.view[ev.Fd]
		hup := ev.Events&(syscall.EPOLLERR|syscall.EPOLLHUP|syscall.EPOLLRDHUP) != 0
		switch co.want {
		case h2WantRead:
			if ev.Events&syscall.EPOLLIN != 0 || hup {
				l.ready(co)
			}
		case h2WantWrite:
			if ev.Events&syscall.EPOLLOUT != 0 || hup {
				l.ready(co)
			}
		}
	}
	now := l.now()
	for len(l.timers) > 0 && l.timers[0].at <= now {
		t := l.timers.pop()
		co := t.co
		if co.armed != t.at {
			continue // a later wait set another timer
		}
		co.armed = 0
		if co.want != 0 && co.want != h2WantDial && co.until != 0 && co.until <= now {
			l.ready(co)
		}
	}
}

// epollWait waits up to d ns for events and returns how many it got. A held wait keeps the
// P (a raw call, as the io_uring loops' held waits); while a dial waits for a P, the wait is
// the runtime's. (Held waits capped at rawBlock cost a third more CPU per request on this
// project's machine, measured with perf's task-clock: the cap is not here; the loop yields
// its P between waits instead, run.)
func (l *h2loop) epollWait(d int64) int {
	raw := l.hold && l.dialing == 0
	if l.pwait2 {
		var n int
		var errno syscall.Errno
		if raw {
			ts := unix.NsecToTimespec(d)
			r, _, e := syscall.RawSyscall6(unix.SYS_EPOLL_PWAIT2, uintptr(l.epfd), uintptr(unsafe.Pointer(&l.events[0])), uintptr(len(l.events)), uintptr(unsafe.Pointer(&ts)), 0, 0)
			n, errno = int(r), e
			if e != 0 {
				n = 0
			}
		} else {
			n, errno = epollPwait2(l.epfd, l.events, d, false)
		}
		if errno != syscall.ENOSYS && errno != syscall.EPERM {
			return n
		}
		l.pwait2 = false // an older kernel, or a seccomp filter: milliseconds
	}
	ms := int((d + int64(time.Millisecond) - 1) / int64(time.Millisecond))
	var r uintptr
	var e syscall.Errno
	if raw {
		r, _, e = syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(l.epfd), uintptr(unsafe.Pointer(&l.events[0])), uintptr(len(l.events)), uintptr(ms), 0, 0)
	} else {
		r, _, e = syscall.Syscall6(syscall.SYS_EPOLL_PWAIT, uintptr(l.epfd), uintptr(unsafe.Pointer(&l.events[0])), uintptr(len(l.events)), uintptr(ms), 0, 0)
	}
	if e != 0 {
		return 0
	}
	return int(r)
}

// run is the coroutine's body.
func (co *h2coro) run(yield func(struct{}) bool) {
	co.yield = yield
	co.body()
}

// park gives the loop its turn until co's socket may be ready for want, or until until
// (the loop's clock; 0: no limit). false: the coroutine is being stopped.
func (co *h2coro) park(want uint8, until int64) bool {
	co.want, co.until = want, until
	if until > 0 && co.armed != until {
		co.armed = until
		co.l.timers.push(h2timer{at: until, co: co})
	}
	return co.yield(struct{}{})
}

// sleepUntil waits until t on the engine's clock, at most 50 ms (the caller looks again).
func (co *h2coro) sleepUntil(e *engine, t int64) {
	if d := t - e.now(); d > 0 {
		co.park(h2WantTime, co.l.now()+min(d, int64(50*time.Millisecond)))
	}
}
