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

// ringIO is a closed-loop evloop's io_uring: each loop turn is one io_uring_enter that
// submits the sends queued since the last one and collects what arrived. Every connection
// has one multishot receive armed, which fills buffers from a provided-buffer ring as
// responses arrive, so no read is ever made for nothing and no system call is made per
// read or per write. Connecting still uses socket(2) and connect(2), a poll on the ring, and
// an update of the ring's file table.
//
// The open loop does the same (ringBlock in evwait_linux.go), with receives made as recvmsg so
// that each buffer carries the kernel's receive timestamp (evstamp_linux.go): the loop submits
// a burst's sends in the call that then sleeps until the next burst, and the receives that
// arrived meanwhile are made when it wakes.
type ringIO struct {
	r    *uring.Ring
	bufs *uring.BufRing
	hold bool         // wait keeping the P: the engine's threads are no more than GOMAXPROCS
	cq   uint32       // the completion queue's size
	msg  *unix.Msghdr // open loop: receives are recvmsg with room for a timestamp (nil: recv)
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
// each of up to files connections; where the kernel refuses (ENOSYS, EPERM,
// kernel.io_uring_disabled, missing features) the loop stays on epoll. It returns what
// undoes it.
func (l *evloop) startRing(files int) func() {
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
			// its own (the default: as many threads as CPUs). Other goroutines (the
			// supervisor) run when the runtime preempts a loop, within 10 ms.
			l.ring = &ringIO{r: r, bufs: b, hold: len(l.e.recs) <= runtime.GOMAXPROCS(0), cq: cq}
			if l.o != nil {
				l.ring.msg = &unix.Msghdr{Controllen: ringControl}
			}
			ringRuns.Add(1)
			return func() {
				r.Close()
				runtime.UnlockOSThread()
			}
		}
		r.Close()
	}
	l.e.ringRefused(err)
	runtime.UnlockOSThread()
	return func() {}
}

// room makes sure the submission queue has a free entry, submitting what it holds if not.
func (g *ringIO) room() {
	if g.r.Full() {
		_ = g.r.Submit()
	}
}

// ringTurn submits what is queued and handles the completions that are ready; with block,
// it first waits (up to the deadline scan) for one when none is.
func (l *evloop) ringTurn(block bool) {
	g := l.ring
	g.bufs.Publish()
	var err error
	switch {
	case !block:
		err = g.r.Submit()
	case g.hold:
		err = g.r.Wait(1, l.scan, true) // one call: it returns at once when something is ready
	default:
		// A wait the runtime must watch costs more: submit and collect first, and wait
		// only when that brought nothing.
		if err = g.r.Submit(); err == nil && g.r.Ready() == 0 {
			err = g.r.Wait(1, l.scan, false)
		}
	}
	if err != nil {
		l.ringBroken()
		return
	}
	l.ringReap()
}

// ringReap handles the completions that are ready and reports how many there were.
func (l *evloop) ringReap() int {
	g := l.ring
	a, b := g.r.Completions()
	for i := range a {
		l.ringCompletion(&a[i])
	}
	for i := range b {
		l.ringCompletion(&b[i])
	}
	g.r.Seen(len(a) + len(b))
	return len(a) + len(b)
}

// ringBroken ends the loop when its ring fails (it does not, short of a kernel bug): what
// is in flight fails as a read error, and the connections end.
func (l *evloop) ringBroken() {
	if l.o != nil {
		l.o.over, l.o.busy = true, 0 // the open loop sends nothing more and ends
	}
	now := l.e.now()
	for _, c := range l.conns {
		if c.state == cReading || c.state == cWriting {
			l.failRest(c, measure.ReadError, now)
		}
		l.finish(c)
	}
}

// ringCompletion handles one completion. Those for a socket c no longer has are ignored,
// but their buffers go back to the ring.
func (l *evloop) ringCompletion(cqe *uring.CQE) {
	c := l.conns[uint32(cqe.UserData)]
	current := uint32(cqe.UserData>>32)&0xffffff == c.gen&0xffffff && c.fd >= 0 && c.state != cDone
	switch cqe.UserData >> 56 {
	case ringConnect:
		if current {
			l.event(c, uint32(max(cqe.Res, 0)))
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
		case c.state == cWriting:
			l.write(c) // the next request waited for this send
		}
	case ringRecv:
		l.ringReceived(c, cqe, current)
	}
}

// ringReceived handles a completion of c's multishot receive.
func (l *evloop) ringReceived(c *econn, cqe *uring.CQE, current bool) {
	g := l.ring
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
				l.arrived(c, cmsgStamp(control))
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
			l.ringRecv(c)
		}
	case cqe.Res != -int32(syscall.ECANCELED):
		l.received(c, nil, syscall.Errno(-cqe.Res))
	}
}

// ringSend queues c's pending request; it stays referenced in c.sent until its completion.
func (l *evloop) ringSend(c *econn) {
	if len(c.pending) == 0 {
		return
	}
	l.ring.room()
	l.ring.r.Send(int(c.id), c.pending, ringData(ringSend, c))
	c.sending, c.sent, c.pending = true, c.pending, nil
}

// awaitConnect watches c's socket until its connect completes.
func (l *evloop) awaitConnect(c *econn) error {
	if l.ring != nil {
		l.ring.room()
		l.ring.r.PollOnce(c.fd, syscall.EPOLLOUT, ringData(ringConnect, c))
		return nil
	}
	return l.ctl(syscall.EPOLL_CTL_ADD, c, syscall.EPOLLOUT)
}

// armRead watches c's newly connected socket for responses: epoll readiness, or (in the
// ring's file slot c.id, so no operation looks the descriptor up) a multishot receive.
func (l *evloop) armRead(c *econn) error {
	if l.ring != nil {
		if err := l.ring.r.SetFile(int(c.id), c.fd); err != nil {
			return err
		}
		l.ringRecv(c)
		return nil
	}
	return l.ctl(syscall.EPOLL_CTL_MOD, c, syscall.EPOLLIN)
}

// ringRecv arms c's multishot receive on its file slot.
func (l *evloop) ringRecv(c *econn) {
	g := l.ring
	g.room()
	if g.msg != nil {
		g.r.RecvMsgMultishot(int(c.id), g.bufs.Group(), g.msg, ringData(ringRecv, c))
		return
	}
	g.r.RecvMultishot(int(c.id), g.bufs.Group(), ringData(ringRecv, c))
}

// ringClose prepares c's socket to be closed: the shutdown ends the receive (and a send)
// still holding it; closeFD's new generation makes their completions stale.
func (l *evloop) ringClose(c *econn) {
	_ = syscall.Shutdown(c.fd, syscall.SHUT_RDWR)
	c.sending, c.sent = false, nil
}
