//go:build linux

package load

import (
	"io"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The connections of the HTTP/2 event loops (h2loop_linux.go): how a coroutine dials and
// adopts its socket, the net.Conn it reads and writes through, and the loop's timers.

// dialConn connects for the coroutine: the dial runs in a goroutine of its own while the
// loop goes on; on TLS the handshake then runs here, over the loop. Before the loop runs the
// coroutine (the initial connections, before the clock), it dials at once (dialNow).
func (co *h2coro) dialConn(e *engine) (net.Conn, syscall.RawConn, error) {
	if !co.started {
		return co.dialNow(e)
	}
	go func() {
		nc, err := e.dial.dialTCP(e.ctx)
		co.dial = dialResult{nc: nc, err: err}
		co.l.hand(co)
	}()
	co.l.dialing++
	co.park(h2WantDial, 0) // only the dial's end resumes it
	r := co.dial
	co.dial = dialResult{}
	if r.err != nil {
		return nil, nil, r.err
	}
	return co.adopt(e, r.nc)
}

// dialNow connects blocking, its waits in poll(2).
func (co *h2coro) dialNow(e *engine) (net.Conn, syscall.RawConn, error) {
	nc, err := e.dial.dialTCP(e.ctx)
	if err != nil {
		return nil, nil, err
	}
	return co.adopt(e, nc)
}

// adopt makes the dialed nc the coroutine's connection: its socket in the loop's epoll set,
// read and written through a loopConn; on TLS, with the handshake done over it.
func (co *h2coro) adopt(e *engine, nc net.Conn) (net.Conn, syscall.RawConn, error) {
	fd := -1
	if sc, ok := nc.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			_ = rc.Control(func(f uintptr) { fd = int(f) })
		}
	}
	if fd < 0 {
		nc.Close()
		return nil, nil, os.NewSyscallError("socket", syscall.EBADF)
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLOUT | connEvents, Fd: co.slot}
	if err := syscall.EpollCtl(co.l.epfd, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
		nc.Close()
		return nil, nil, os.NewSyscallError("epoll_ctl", err)
	}
	lc := &loopConn{Conn: nc, fd: fd, co: co}
	if e.dial.tls == nil {
		return lc, nil, nil
	}
	tc, err := e.dial.handshake(e.ctx, lc, false)
	if err != nil {
		return nil, nil, err
	}
	return tc, nil, nil
}

// loopConn is a connection of an HTTP/2 loop: a net.Conn whose Read and Write, when the
// socket would block, wait in the loop or, before the loop runs its coroutine, in poll(2).
// Its deadlines are the loop's timers: a wait past one ends in os.ErrDeadlineExceeded, as a
// net.Conn's read does. Only its coroutine reads and writes it; any goroutine may set its
// deadlines (a run cut short interrupts it so).
type loopConn struct {
	net.Conn // the dialed connection: it owns the socket (Close, addresses)
	fd       int
	co       *h2coro
	rdl, wdl atomic.Int64 // deadlines on the loop's clock (0: none)
}

func (lc *loopConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		n, e := recv(lc.fd, p)
		switch {
		case e == 0 && n > 0:
			return n, nil
		case e == 0:
			return 0, io.EOF
		case e == syscall.EINTR:
			continue
		case e != syscall.EAGAIN:
			return 0, &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("recvfrom", e)}
		}
		if err := lc.wait(h2WantRead, &lc.rdl); err != nil {
			return 0, err
		}
	}
}

func (lc *loopConn) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		n, e := send(lc.fd, p[done:])
		switch {
		case e == 0:
			done += n
			continue
		case e == syscall.EINTR:
			continue
		case e != syscall.EAGAIN:
			return done, &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("sendto", e)}
		}
		if err := lc.wait(h2WantWrite, &lc.wdl); err != nil {
			return done, err
		}
	}
	return done, nil
}

// wait waits until the socket may be ready for want, or its deadline dl has passed.
func (lc *loopConn) wait(want uint8, dl *atomic.Int64) error {
	l := lc.co.l
	at, now := dl.Load(), l.now()
	if at != 0 && now >= at || l.e.cancel.Load() {
		return os.ErrDeadlineExceeded // as a connection the end of the run interrupts
	}
	if lc.co.started {
		if !lc.co.park(want, at) {
			return net.ErrClosed
		}
		return nil
	}
	events := int16(unix.POLLIN)
	if want == h2WantWrite {
		events = unix.POLLOUT
	}
	ms := -1
	if at != 0 {
		ms = int((at - now + int64(time.Millisecond) - 1) / int64(time.Millisecond))
	}
	fds := []unix.PollFd{{Fd: int32(lc.fd), Events: events}}
	if _, err := unix.Poll(fds, ms); err != nil && err != unix.EINTR {
		return os.NewSyscallError("poll", err)
	}
	return nil
}

func (lc *loopConn) SetDeadline(t time.Time) error {
	_ = lc.SetReadDeadline(t)
	return lc.SetWriteDeadline(t)
}

func (lc *loopConn) SetReadDeadline(t time.Time) error {
	lc.rdl.Store(lc.co.l.at(t))
	return nil
}

func (lc *loopConn) SetWriteDeadline(t time.Time) error {
	lc.wdl.Store(lc.co.l.at(t))
	return nil
}

// h2timer is a coroutine's wait that ends at at (the loop's clock).
type h2timer struct {
	at int64
	co *h2coro
}

// h2timers is the loop's timers: a binary heap, earliest first (a timer that a later wait
// replaced stays until its time and is then dropped).
type h2timers []h2timer

func (h *h2timers) push(t h2timer) {
	*h = append(*h, t)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if s[p].at <= s[i].at {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *h2timers) pop() h2timer {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s[last] = h2timer{}
	s = s[:last]
	for i := 0; ; {
		m, a, b := i, 2*i+1, 2*i+2
		if a < len(s) && s[a].at < s[m].at {
			m = a
		}
		if b < len(s) && s[b].at < s[m].at {
			m = b
		}
		if m == i {
			break
		}
		s[m], s[i] = s[i], s[m]
		i = m
	}
	*h = s
	return top
}
