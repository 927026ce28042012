//go:build linux

package load

import (
	"runtime"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/apiperf/apiperf/load/internal/uring"
	"github.com/apiperf/apiperf/measure"
)

// ringIO is the io_uring backend of an event loop (the other is epoll, evepoll_linux.go): each loop turn is one io_uring_enter that
// submits the sends queued since the last one and collects what arrived. Every connection
// has one multishot receive armed, which fills buffers from a provided-buffer ring as
// responses arrive, so no read is ever made for nothing and no system call is made per
// read or per write. Connecting still uses socket(2) and connect(2), a poll on the ring, and
// an update of the ring's file table.
//
// The open loop does the same (pause), with receives made as recvmsg so
// that each buffer carries the kernel's receive timestamp (evstamp_linux.go): the loop submits
// a burst's sends in the call that then sleeps until the next burst, and the receives that
// arrived meanwhile are made when it wakes.
type ringIO struct {
	l    *evloop
	r    *uring.Ring
	bufs *uring.BufRing
	hold bool         // wait keeping the P: the engine's threads are no more than GOMAXPROCS, and keepP
	cq   uint32       // the completion queue's size
	msg  *unix.Msghdr // open loop: receives are recvmsg with room for a timestamp (nil: recv)
	st   *stampState  // where the receives' timestamps are noted (with msg)
}

// ringControl is the room for control messages in an open loop's receive buffers: a
// SCM_TIMESTAMPNS message takes 32 bytes.
const ringControl = 64

// What a completion is for: the kind sits in the user data's top byte, then the
// connection's generation (24 bits), then its index in the loop.
const (
	ringConnect = iota + 1
	ringSend
	ringRecv
)

// ringBufSize is the size of one provided receive buffer: a response larger than that
// arrives in several completions.
const ringBufSize = 2 << 10

// ringRuns counts the event loops that ran on an io_uring (tests check the path was taken).
var ringRuns atomic.Int64

// newRing sets up a ring (tests make it refuse, to cover the fallback to epoll).
var newRing = uring.New

func ringData(kind uint64, c *econn) uint64 {
	return kind<<56 | uint64(c.gen&0xffffff)<<32 | uint64(uint32(c.id))
}

// ringSizes sizes a loop's ring for n connections: a submission slot and a buffer per
// connection up to 4096 (a turn with more sends submits in several calls; receives that
// find no buffer are asked again), and room for every connection's completions of a turn.
func ringSizes(n int) (sq, cq uint32, bufs int) {
	p := 64
	for p < n && p < 4096 {
		p <<= 1
	}
	c := 4 * p
	for c < 4*n && c < 1<<16 {
		c <<= 1
	}
	return uint32(p), uint32(c), p
}

// startRing locks the loop to its thread and sets up its io_uring, with a file slot for
// each of up to files connections (st: receives carry their kernel timestamps, noted there),
// and returns it with what undoes it; where the kernel refuses (ENOSYS, EPERM,
// kernel.io_uring_disabled, missing features) it returns nil, and the loop stays on epoll
// (choosePoller). The connections dialPool opened on the loop's epoll set move to the ring.
func (l *evloop) startRing(files int, st *stampState) (*ringIO, func()) {
	runtime.LockOSThread()
	sq, cq, nbuf := ringSizes(len(l.conns))
	r, err := newRing(sq, cq)
	if err == nil {
		var b *uring.BufRing
		if b, err = r.NewBufRing(0, nbuf, ringBufSize); err == nil {
			err = r.RegisterFiles(files)
		}
		if err == nil {
			// A wait that keeps its P spares the runtime handing the P to another
			// thread and back on every idle turn; it is fit while every loop has a P of
			// its own (the default: as many threads as CPUs) and the target is not
			// served by this process (keepP). Other goroutines (the supervisor) run
			// when the runtime preempts a loop, within 10 ms.
			g := &ringIO{l: l, r: r, bufs: b, hold: len(l.e.recs) <= runtime.GOMAXPROCS(0) && l.ring.hold, cq: cq}
			if st != nil {
				g.msg, g.st = &unix.Msghdr{Controllen: ringControl}, st
			}
			l.io = g // adopt's closes go through it
			g.adopt()
			ringRuns.Add(1)
			return g, func() {
				r.Close()
				runtime.UnlockOSThread()
			}
		}
		r.Close()
	}
	l.ring.refused(err)
	runtime.UnlockOSThread()
	return nil, nil
}

// room makes sure the submission queue has a free entry, submitting what it holds if not.
func (g *ringIO) room() {
	if g.r.Full() {
		_ = g.r.Submit()
	}
}

// turn submits what is queued and handles the completions that are ready; with d, it first
// waits (up to d) for one when none is.
func (g *ringIO) turn(d int64) {
	g.bufs.Publish()
	var err error
	switch {
	case d == 0:
		err = g.r.Submit()
	case g.hold:
		err = g.r.Wait(1, d, true) // one call: it returns at once when something is ready
	default:
		// A wait the runtime must watch costs more: submit and collect first, and wait
		// only when that brought nothing.
		if err = g.r.Submit(); err == nil && g.r.Ready() == 0 {
			err = g.r.Wait(1, d, false)
		}
	}
	if err != nil {
		g.broken()
		return
	}
	g.reap()
}

// reap handles the completions that are ready and reports how many there were.
func (g *ringIO) reap() int {
	a, b := g.r.Completions()
	for i := range a {
		g.completion(&a[i])
	}
	for i := range b {
		g.completion(&b[i])
	}
	g.r.Seen(len(a) + len(b))
	return len(a) + len(b)
}

// broken ends the loop when its ring fails (it does not, short of a kernel bug): what
// is in flight fails as a read error, and the connections end.
func (g *ringIO) broken() {
	l := g.l
	l.kind.broken()
	now := l.e.now()
	for _, c := range l.conns {
		if c.state == cReading || c.state == cWriting {
			l.failRest(c, measure.ReadError, now)
		}
		l.finish(c)
	}
}

// completion handles one completion. Those for a socket c no longer has are ignored,
// but their buffers go back to the ring.
func (g *ringIO) completion(cqe *uring.CQE) {
	l := g.l
	c := l.conns[uint32(cqe.UserData)]
	current := uint32(cqe.UserData>>32)&0xffffff == c.gen&0xffffff && c.fd >= 0 && c.state != cDone
	switch cqe.UserData >> 56 {
	case ringConnect:
		if current {
			l.event(c, false) // a connect's poll: the loop reads the socket's error
		}
	case ringSend:
		if !current {
			return
		}
		sent := len(c.sent)
		c.sending, c.sent = false, nil
		switch {
		case int(cqe.Res) != sent:
			l.fail(c, measure.WriteError)
		case c.state == cWriting || c.tls != nil:
			l.write(c) // the next request (or what TLS wrote meanwhile) waited for this send
		}
	case ringRecv:
		g.received(c, cqe, current)
	}
}

// received handles a completion of c's multishot receive.
func (g *ringIO) received(c *econn, cqe *uring.CQE, current bool) {
	l := g.l
	end := false // a recvmsg's buffer with no data: the end of the stream
	if cqe.Flags&uring.FlagBuffer != 0 {
		id := cqe.BufferID()
		if current && cqe.Res > 0 {
			b := g.bufs.Bytes(id, int(cqe.Res))
			if g.msg != nil {
				control, data, ok := uring.Message(b, ringControl)
				if !ok {
					data = nil
				}
				g.st.arrived(c, cmsgStamp(control))
				b, end = data, ok && len(data) == 0
			}
			if len(b) > 0 {
				l.received(c, b, 0)
			}
		}
		g.bufs.Recycle(id)
	}
	if !current || cqe.Flags&uring.FlagMore != 0 {
		return
	}
	switch {
	case cqe.Res == 0 || end: // the end of the stream
		l.received(c, nil, 0)
	case cqe.Res == -int32(syscall.ENOBUFS) || cqe.Res > 0:
		// No buffer was left (or the kernel stopped the receive for its own reasons):
		// ask again; the buffers handed back this turn are published before it is submitted.
		if c.fd >= 0 && c.gen&0xffffff == uint32(cqe.UserData>>32)&0xffffff {
			g.recv(c)
		}
	case cqe.Res != -int32(syscall.ECANCELED):
		l.received(c, nil, syscall.Errno(-cqe.Res))
	}
}

// write queues c's pending request (after the send in flight, if any: false); it stays
// referenced in c.sent until its completion.
func (g *ringIO) write(c *econn) bool {
	if c.sending {
		return false // the send in flight completes first, then this one is queued
	}
	if len(c.pending) == 0 {
		return true
	}
	g.room()
	g.r.Send(int(c.id), c.pending, ringData(ringSend, c))
	c.sending, c.sent, c.pending = true, c.pending, nil
	return true
}

// written: nothing to undo (a send never waits for room on the ring).
func (g *ringIO) written(*econn) {}

// connecting watches c's socket until its connect completes.
func (g *ringIO) connecting(c *econn) error {
	g.room()
	g.r.PollOnce(c.fd, unix.POLLOUT, ringData(ringConnect, c))
	return nil
}

// connected watches c's newly connected socket for responses: a multishot receive in the
// ring's file slot c.id, so no operation looks the descriptor up.
func (g *ringIO) connected(c *econn) error {
	if err := g.r.SetFile(int(c.id), c.fd); err != nil {
		return err
	}
	g.recv(c)
	return nil
}

// recv arms c's multishot receive on its file slot.
func (g *ringIO) recv(c *econn) {
	g.room()
	if g.msg != nil {
		g.r.RecvMsgMultishot(int(c.id), g.bufs.Group(), g.msg, ringData(ringRecv, c))
		return
	}
	g.r.RecvMultishot(int(c.id), g.bufs.Group(), ringData(ringRecv, c))
}

// closing prepares c's socket to be closed: the shutdown ends the receive (and a send)
// still holding it; closeFD's new generation makes their completions stale.
func (g *ringIO) closing(c *econn) {
	_ = syscall.Shutdown(c.fd, syscall.SHUT_RDWR)
	c.sending, c.sent = false, nil
}

// adopt moves the connections already open (dialPool's) from the loop's epoll set to the ring.
func (g *ringIO) adopt() {
	l := g.l
	for _, c := range l.conns {
		if c.fd < 0 {
			continue
		}
		if l.ep.forget(c) != nil || g.connected(c) != nil {
			l.closeFD(c) // the first request on it connects again
		}
	}
}

// pause is the open loop's wait on an io_uring: one io_uring_enter submits the sends queued
// since the last and waits. Sleeping through arrivals is a wait for more completions than can
// come before the timeout: the ring's work is deferred to the loop's thread, so the receives
// are made (stamped with their arrival times) when it wakes.
func (g *ringIO) pause(w pause) wakeup {
	g.bufs.Publish()
	var err error
	switch {
	case w.d == 0:
		err = g.r.Submit()
	case w.through:
		err = g.r.Wait(g.cq, w.d, w.raw && w.d <= rawBlock) // a full ring's worth: more than a quantum brings
	default:
		err = g.r.Wait(1, w.d, w.raw && w.d <= rawBlock)
	}
	if err != nil {
		g.broken()
		return wakeup{}
	}
	n := g.reap()
	return w.woken(g.l.e.now(), n)
}
