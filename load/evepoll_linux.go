//go:build linux

package load

import (
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
// OS thread; the open loop waits in epoll_pwait2 instead where the kernel has it (pace).
type epoller struct {
	l       *evloop
	epfd    int
	file    *os.File        // epfd, so the loop can wait in Go's netpoller
	rc      syscall.RawConn // of file
	events  []syscall.EpollEvent
	ready   int // events filled by the last wait
	waitFn  func(fd uintptr) bool
	netpoll bool // the open loop waits through Go's netpoller, woken by the timerfd
}

// newEpoller makes l's epoll set.
func newEpoller(l *evloop) (*epoller, error) {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	if err := syscall.SetNonblock(epfd, true); err != nil {
		syscall.Close(epfd)
		return nil, os.NewSyscallError("fcntl", err)
	}
	p := &epoller{l: l, epfd: epfd, file: os.NewFile(uintptr(epfd), "epoll"), events: make([]syscall.EpollEvent, 256)}
	if p.rc, err = p.file.SyscallConn(); err != nil {
		p.file.Close()
		return nil, err
	}
	p.waitFn = p.poll
	return p, nil
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

// turn waits (block false: does not park) and handles the events that came.
func (p *epoller) turn(block bool) {
	p.wait(block)
	p.dispatch()
}

// dispatch hands the events of the last wait to the loop.
func (p *epoller) dispatch() {
	l := p.l
	for _, ev := range p.events[:p.ready] {
		if ev.Fd == timerID {
			l.timerFired()
			continue
		}
		if c := l.conns[ev.Fd]; c.state != cDone && c.fd >= 0 {
			l.event(c, ev.Events)
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

// wait fills p.events: at once when events are ready, otherwise it parks until one is or
// the next deadline check is due (block false: do not park at all).
func (p *epoller) wait(block bool) {
	if p.poll(uintptr(p.epfd)) || !block {
		return
	}
	_ = p.file.SetReadDeadline(time.Now().Add(time.Duration(p.l.scan)))
	if err := p.rc.Read(p.waitFn); err != nil {
		p.ready = 0
	}
}

// pace is the open loop's wait for want: in epoll_pwait2 (block), or where that is missing
// through the netpoller, woken by the timerfd.
func (p *epoller) pace(now, want int64) {
	l := p.l
	if !p.netpoll {
		if l.o.raw {
			runtime.Gosched() // the loop keeps its P in short waits: let the run's other goroutines in
		}
		p.block(now, want)
	} else {
		l.arm(now, want)
		l.o.parks++
		if err := p.rc.Read(p.waitFn); err != nil {
			p.ready = 0 // interrupted: the loop condition sees the cancellation
		}
	}
	p.dispatch()
}

// block waits in epoll_pwait2 for events or until want (math.MaxInt64: none). While requests
// are in flight and their arrival times are stamped by the kernel, it sleeps through the
// arrivals instead (until the next send, at most a quantum while none can be sent) and then
// takes every event at once; connects and writes that wait for room are waited for as events.
func (p *epoller) block(now, want int64) {
	l := p.l
	o := l.o
	d, timed := l.waitFor(now, want)
	wait := d
	if timed {
		sleepNs(d, o.raw)
		wait = 0
	}
	n, errno := epollPwait2(p.epfd, p.events, wait, o.raw)
	after := l.e.now()
	switch {
	case errno == syscall.ENOSYS || errno == syscall.EPERM:
		p.netpoll = true // an older kernel, or a seccomp filter: the netpoller and a timerfd
		o.stampable, o.stamps = false, false
		p.ready = 0
		return
	case errno != 0:
		p.ready = 0
		return
	}
	p.ready = n
	l.waited(now, after, want, d, timed, n)
}

// interrupt makes a wait through the netpoller return now (the run was cancelled).
func (p *epoller) interrupt() { _ = p.file.SetReadDeadline(time.Unix(1, 0)) }

func (p *epoller) close() { p.file.Close() }

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
