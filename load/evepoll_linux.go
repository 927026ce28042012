//go:build linux

package load

import (
	"math"
	"os"
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/apiperf/apiperf/measure"
)

// epoller is the epoll backend of an event loop (the other is io_uring, evring_linux.go).
// Every loop has one: its set also holds the open loop's timerfd and the initial pool while
// it connects (dialPool). The loop waits on it through Go's netpoller, so it never blocks an
// OS thread; the open loop waits in epoll_pwait2 instead where the kernel has it (pause).
type epoller struct {
	l       *evloop
	epfd    int
	file    *os.File        // epfd, so the loop can wait in Go's netpoller
	rc      syscall.RawConn // of file
	events  []syscall.EpollEvent
	ready   int // events filled by the last wait
	waitFn  func(fd uintptr) bool
	netpoll bool  // the open loop waits through Go's netpoller, woken by the timerfd
	tfd     int   // the open loop's timerfd, in the set (-1: none)
	armed   int64 // the wake-up the timerfd is set for (0: not armed)
	expires int64 // when it is to expire: armed, or when it was set if armed was past
	fired   bool  // the last dispatch saw the timer expire, late by late
	late    int64
}

// timerID marks the timerfd's events (connections use their index).
const timerID = -1

// newEpoller makes l's epoll set (open: with a timerfd for the open loop's waits through the
// netpoller; netpoll: it waits so from the start, not only where epoll_pwait2 is missing).
func newEpoller(l *evloop, open, netpoll bool) (*epoller, error) {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	if err := syscall.SetNonblock(epfd, true); err != nil {
		syscall.Close(epfd)
		return nil, os.NewSyscallError("fcntl", err)
	}
	p := &epoller{l: l, epfd: epfd, file: os.NewFile(uintptr(epfd), "epoll"), events: make([]syscall.EpollEvent, 256), netpoll: netpoll, tfd: -1}
	if p.rc, err = p.file.SyscallConn(); err != nil {
		p.file.Close()
		return nil, err
	}
	p.waitFn = p.poll
	if open {
		if err := p.timer(); err != nil {
			p.close()
			return nil, err
		}
	}
	return p, nil
}

// timer adds a timerfd to the set, which wakes the open loop's waits through the netpoller.
func (p *epoller) timer() error {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return os.NewSyscallError("timerfd_create", err)
	}
	p.tfd = fd
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | unix.EPOLLET, Fd: timerID}
	if err := syscall.EpollCtl(p.epfd, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return os.NewSyscallError("epoll_ctl", err)
	}
	return nil
}

// connEvents are the flags every connection's epoll registration carries besides
// EPOLLIN/EPOLLOUT: edge-triggered, so a socket is reported when something arrives rather
// than on every wait while it stays ready (each reported socket costs a poll of it at every
// wait); and the peer's half-close reported as such, so read reads to the end of the stream.
// EPOLL_CTL_MOD polls the socket again, so an edge missed while a state did not read (a write
// waiting for room, a connect) is reported once the registration changes.
const connEvents = syscall.EPOLLRDHUP | unix.EPOLLET

func (p *epoller) ctl(op int, c *econn, events uint32) error {
	ev := syscall.EpollEvent{Events: events | connEvents, Fd: c.id}
	return syscall.EpollCtl(p.epfd, op, c.fd, &ev)
}

// connecting watches c's socket until its connect completes.
func (p *epoller) connecting(c *econn) error {
	return p.ctl(syscall.EPOLL_CTL_ADD, c, syscall.EPOLLOUT)
}

// connected watches c's newly connected socket for responses.
func (p *epoller) connected(c *econn) error { return p.ctl(syscall.EPOLL_CTL_MOD, c, syscall.EPOLLIN) }

// write writes what is left of c's request; the socket's buffer takes a small request at
// once. When it has no room, EPOLLOUT is asked for and the write waits.
func (p *epoller) write(c *econn) bool {
	for len(c.pending) > 0 {
		n, err := send(c.fd, c.pending)
		switch {
		case err == syscall.EAGAIN:
			if !c.out {
				c.out = true
				_ = p.ctl(syscall.EPOLL_CTL_MOD, c, syscall.EPOLLIN|syscall.EPOLLOUT)
			}
			return false
		case err == syscall.EINTR:
			continue
		case err != 0:
			p.l.fail(c, measure.WriteError)
			return false
		}
		c.pending = c.pending[n:]
	}
	return true
}

// written goes back to EPOLLIN alone once the write that waited for room is done.
func (p *epoller) written(c *econn) {
	if c.out {
		c.out = false
		_ = p.ctl(syscall.EPOLL_CTL_MOD, c, syscall.EPOLLIN)
	}
}

// closing: closing a socket also removes it from the epoll set.
func (p *epoller) closing(*econn) {}

// forget takes c's socket out of the set (it moves to an io_uring).
func (p *epoller) forget(c *econn) error {
	return syscall.EpollCtl(p.epfd, syscall.EPOLL_CTL_DEL, c.fd, nil)
}

// dialWait waits up to ms milliseconds for events, without the netpoller (the initial pool
// opens before the clock starts, dialPool), and reports how many came; got reads them.
func (p *epoller) dialWait(ms int) (int, error) {
	n, err := syscall.EpollWait(p.epfd, p.events, ms)
	return max(n, 0), err
}

// got is event i of the last dialWait: the connection it is for (nil: the timer) and whether
// its peer hung up.
func (p *epoller) got(i int) (*econn, bool) {
	ev := p.events[i]
	if ev.Fd < 0 {
		return nil, false
	}
	return p.l.conns[ev.Fd], hungUp(ev.Events)
}

// hungUp reports whether an event's flags say the peer hung up or the socket failed.
func hungUp(ev uint32) bool {
	return ev&(syscall.EPOLLRDHUP|syscall.EPOLLHUP|syscall.EPOLLERR) != 0
}

// turn waits up to d (0: does not park) and handles the events that came.
func (p *epoller) turn(d int64) {
	p.wait(d)
	p.dispatch()
}

// dispatch hands the events of the last wait to the loop.
func (p *epoller) dispatch() {
	l := p.l
	for _, ev := range p.events[:p.ready] {
		if ev.Fd == timerID {
			p.timerFired()
			continue
		}
		if c := l.conns[ev.Fd]; c.state != cDone && c.fd >= 0 {
			l.event(c, hungUp(ev.Events))
		}
	}
}

// poll is the netpoller callback: it takes the ready events, if any, without blocking.
func (p *epoller) poll(fd uintptr) bool {
	n, err := syscall.EpollWait(int(fd), p.events, 0)
	if err != nil || n <= 0 {
		p.ready = 0
		return err != nil && err != syscall.EINTR
	}
	p.ready = n
	return true
}

// wait fills p.events: at once when events are ready, otherwise it parks until one is or d
// has passed (0: do not park at all).
func (p *epoller) wait(d int64) {
	if p.poll(uintptr(p.epfd)) || d == 0 {
		return
	}
	_ = p.file.SetReadDeadline(time.Now().Add(time.Duration(d)))
	if err := p.rc.Read(p.waitFn); err != nil {
		p.ready = 0
	}
}

// pause is the open loop's wait: in epoll_pwait2, or where that is missing through the
// netpoller, woken by the timerfd; then it handles what came.
func (p *epoller) pause(w pause) wakeup {
	var up wakeup
	if !p.netpoll {
		if w.raw {
			runtime.Gosched() // the loop keeps its P in short waits: let the run's other goroutines in
		}
		up = p.block(w)
	} else {
		p.arm(w.now, w.want)
		up.parked = true
		if err := p.rc.Read(p.waitFn); err != nil {
			p.ready = 0 // interrupted: the loop condition sees the cancellation
		}
	}
	p.fired = false
	p.dispatch()
	if p.fired {
		up.timed, up.late = true, p.late
	}
	return up
}

// block waits in epoll_pwait2 for events or until w.d has passed. Sleeping through arrivals
// (w.through), it sleeps for w.d and then takes every event at once. Where the kernel has no
// epoll_pwait2 it waits through the netpoller from then on, and cannot sleep through arrivals.
func (p *epoller) block(w pause) wakeup {
	wait := w.d
	if w.through {
		sleepNs(w.d, w.raw)
		wait = 0
	}
	n, errno := epollPwait2(p.epfd, p.events, wait, w.raw)
	after := p.l.e.now()
	switch {
	case errno == syscall.ENOSYS || errno == syscall.EPERM:
		p.netpoll = true // an older kernel, or a seccomp filter: the netpoller and a timerfd
		p.ready = 0
		return wakeup{unstamp: true}
	case errno != 0:
		p.ready = 0
		return wakeup{}
	}
	p.ready = n
	return w.woken(after, n)
}

// arm sets the timerfd for want (math.MaxInt64: leaves it).
func (p *epoller) arm(now, want int64) {
	if want == math.MaxInt64 || want == p.armed {
		return
	}
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(max(want-now, 1))} // zero would disarm it
	if unix.TimerfdSettime(p.tfd, 0, &spec, nil) == nil {
		p.armed, p.expires = want, max(want, now)
	}
}

// timerFired notes the timerfd's expiry: how late it woke the loop.
func (p *epoller) timerFired() {
	if p.armed > 0 {
		p.fired, p.late = true, p.l.e.now()-p.expires
	}
	p.armed = 0
}

// interrupt makes a wait through the netpoller return now (the run was cancelled).
func (p *epoller) interrupt() { _ = p.file.SetReadDeadline(time.Unix(1, 0)) }

func (p *epoller) close() {
	p.file.Close()
	if p.tfd >= 0 {
		syscall.Close(p.tfd)
		p.tfd = -1
	}
}

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

// epollPwait2 waits up to d nanoseconds (d < 0: without limit) for events on epfd, with
// epoll_pwait2's nanosecond timeout (Linux 5.11); a raw wait up to rawBlock keeps the thread's
// P, any other is a blocking system call for the runtime.
func epollPwait2(epfd int, events []syscall.EpollEvent, d int64, raw bool) (int, syscall.Errno) {
	var ts unix.Timespec
	var ptr unsafe.Pointer
	if d >= 0 {
		ts = unix.NsecToTimespec(d)
		ptr = unsafe.Pointer(&ts)
	}
	var r uintptr
	var e syscall.Errno
	if raw && d >= 0 && d <= rawBlock {
		r, _, e = syscall.RawSyscall6(unix.SYS_EPOLL_PWAIT2, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), uintptr(ptr), 0, 0)
	} else {
		r, _, e = syscall.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), uintptr(ptr), 0, 0)
	}
	if e != 0 {
		return 0, e
	}
	return int(r), 0
}
