//go:build linux

package load

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Kernel receive timestamps for the open loop's responses. With SO_TIMESTAMPNS a TCP socket
// reports, with each recvmsg, when the last segment it returned arrived (its skb's receive
// time; the kernel keeps it across coalesced segments). A response is then complete when
// its last byte arrived, not when the loop got round to reading it, so the loop may sleep
// through arrivals until its next send is due and read everything at once: one wake-up per
// burst of sends instead of one per response, with no loss of precision in the latency.
// The stamps are CLOCK_REALTIME; each wake-up relates them to the monotonic clock.

// stampState is what an open loop knows of its receive timestamps.
type stampState struct {
	stampable bool  // every connection asked the kernel for receive timestamps
	stamps    bool  // and the last read had one: the loop may sleep through arrivals
	wall      int64 // the wall clock minus the step's clock at the last wake-up, to read the stamps
	rd        stampReader
}

// stampConn asks for receive timestamps on fd; false when the kernel refused.
func stampConn(fd int) bool {
	return syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) == nil
}

// stampReader reads with recvmsg and takes the receive timestamp out of its control message.
// It belongs to one loop and is reused for every read (no allocation).
type stampReader struct {
	msg unix.Msghdr
	iov unix.Iovec
	oob [64]byte
}

// read reads into b from the non-blocking socket fd (as recv does) and returns the bytes read
// and the wall-clock arrival time of the last of them in ns (0: none reported).
func (r *stampReader) read(fd int, b []byte) (int, int64, syscall.Errno) {
	r.iov.Base = &b[0]
	r.iov.SetLen(len(b))
	r.msg.Iov = &r.iov
	r.msg.Iovlen = 1
	r.msg.Control = &r.oob[0]
	r.msg.SetControllen(len(r.oob))
	n, _, e := syscall.RawSyscall(unix.SYS_RECVMSG, uintptr(fd), uintptr(unsafe.Pointer(&r.msg)), 0)
	r.iov.Base = nil
	if e != 0 {
		return -1, 0, e
	}
	return int(n), r.stamp(), 0
}

// stamp finds SCM_TIMESTAMPNS in the control message recvmsg returned.
func (r *stampReader) stamp() int64 {
	return cmsgStamp(r.oob[:min(int(r.msg.Controllen), len(r.oob))])
}

// cmsgStamp finds SCM_TIMESTAMPNS in control messages and returns it in wall-clock ns (0:
// none there).
func cmsgStamp(oob []byte) int64 {
	for len(oob) >= unix.SizeofCmsghdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		if h.Len < unix.SizeofCmsghdr || int(h.Len) > len(oob) {
			return 0
		}
		if h.Level == syscall.SOL_SOCKET && h.Type == unix.SCM_TIMESTAMPNS && int(h.Len) >= unix.CmsgLen(int(unsafe.Sizeof(unix.Timespec{}))) {
			ts := (*unix.Timespec)(unsafe.Pointer(&oob[unix.CmsgLen(0)]))
			return ts.Nano()
		}
		oob = oob[min(unix.CmsgSpace(int(h.Len)-unix.CmsgLen(0)), len(oob)):]
	}
	return 0
}

// read reads what arrived for c into the loop's buffer. An open loop with receive
// timestamps notes when the bytes arrived (c.at). The loop sleeps through arrivals only
// while reads come stamped: the kernel turns stamping on shortly after the first socket asks
// for it (the first responses may come without), so the loop starts out reading on arrival.
func (o *openLoop) read(c *econn) (int, syscall.Errno) {
	l := o.l
	if !o.stampable {
		return recv(c.fd, l.buf)
	}
	n, wall, err := o.rd.read(c.fd, l.buf)
	if n > 0 {
		o.arrived(c, wall)
	}
	return n, err
}

// arrived notes the kernel's timestamp (wall-clock ns, 0: none) of the bytes just read for c.
func (s *stampState) arrived(c *econn, wall int64) {
	c.at, s.stamps = 0, wall > 0
	if wall > 0 {
		c.at = max(wall-s.wall, c.start)
	}
}

// doneAt is when c's response just parsed was complete: when its last byte arrived, by the
// kernel's timestamp, else now.
func (l *evloop) doneAt(c *econn) int64 {
	if c.at > 0 {
		return c.at
	}
	return l.e.now()
}
