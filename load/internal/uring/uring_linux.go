//go:build linux

// Package uring is a small io_uring ring for the load engine's event loops: submission and
// completion queues mapped once, a provided-buffer ring for multishot receives, and the few
// operations the engine uses (send, multishot receive, poll). It makes raw system calls
// through golang.org/x/sys/unix; there is no cgo.
//
// A Ring is owned by one goroutine locked to its OS thread (it is set up single-issuer with
// deferred task running: completions are produced only while that thread enters the ring).
package uring

import (
	"errors"
	"fmt"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Setup flags, enter flags, features and registration opcodes (include/uapi/linux/io_uring.h).
const (
	setupCQSize        = 1 << 3
	setupSubmitAll     = 1 << 7
	setupCoopTaskrun   = 1 << 8
	setupSingleIssuer  = 1 << 12
	setupDeferTaskrun  = 1 << 13
	enterGetEvents     = 1 << 0
	enterExtArg        = 1 << 3
	featSingleMmap     = 1 << 0
	featNoDrop         = 1 << 1
	featExtArg         = 1 << 8
	registerFilesUpd   = 6
	registerFiles2     = 13
	registerPbufRing   = 22
	rsrcRegisterSparse = 1
	unregisterPbufRing = 23
	offSQRing          = 0
	offSQEs            = 0x10000000
)

// Opcodes and SQE flags the engine uses.
const (
	opPollAdd = 6
	opRecvMsg = 10
	opSend    = 26
	opRecv    = 27

	sqeFixedFile    = 1 << 0
	sqeBufferSelect = 1 << 5
	recvMultishot   = 1 << 1 // in the SQE's ioprio
)

// CQE flags.
const (
	// FlagBuffer: the completion used a provided buffer, whose id is Flags>>16.
	FlagBuffer = 1 << 0
	// FlagMore: a multishot request goes on and will complete again.
	FlagMore = 1 << 1
)

// SQE is a submission queue entry (struct io_uring_sqe, 64 bytes).
type SQE struct {
	Opcode      uint8
	Flags       uint8
	Ioprio      uint16
	Fd          int32
	Off         uint64
	Addr        uint64
	Len         uint32
	OpFlags     uint32
	UserData    uint64
	BufGroup    uint16
	Personality uint16
	SpliceFdIn  int32
	Addr3       uint64
	_           uint64
}

// CQE is a completion queue entry (struct io_uring_cqe, 16 bytes).
type CQE struct {
	UserData uint64
	Res      int32
	Flags    uint32
}

// BufferID is the provided buffer a completion filled (valid when Flags has FlagBuffer).
func (c *CQE) BufferID() uint16 { return uint16(c.Flags >> 16) }

type params struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFD uint32
	resv                                                                   [3]uint32
	sqOff                                                                  [10]uint32 // head, tail, ring_mask, ring_entries, flags, dropped, array, resv1, resv2 (u64)
	cqOff                                                                  [10]uint32 // head, tail, ring_mask, ring_entries, overflow, cqes, flags, resv1, resv2 (u64)
}

// Ring is one io_uring instance.
type Ring struct {
	fd      int
	mem     []byte // the SQ and CQ rings (one mapping)
	sqeMem  []byte
	sqHead  *uint32
	sqTail  *uint32
	sqMask  uint32
	sqes    []SQE
	tail    uint32 // our copy of the SQ tail
	pending uint32 // SQEs queued since the last enter
	cqHead  *uint32
	cqTail  *uint32
	cqMask  uint32
	cqes    []CQE
	bufs    []*BufRing
	arg     getEventsArg // Wait's argument and timeout, kept off the stack
	ts      unix.Timespec
}

// ErrUnsupported wraps the reason a ring could not be set up (an old kernel, io_uring
// disabled or refused by a sandbox); callers fall back to epoll on it.
var ErrUnsupported = errors.New("io_uring unavailable")

// New sets up a ring with room for sq submissions and cq completions (both rounded up to
// powers of two by the kernel). It must be called on the thread that will use the ring.
func New(sq, cq uint32) (*Ring, error) {
	if !littleEndian() {
		return nil, fmt.Errorf("%w: this package lays out shared words little-endian", ErrUnsupported)
	}
	p := params{flags: setupCQSize | setupSubmitAll | setupCoopTaskrun | setupSingleIssuer | setupDeferTaskrun, cqEntries: cq}
	r1, _, e := syscall.Syscall(unix.SYS_IO_URING_SETUP, uintptr(sq), uintptr(unsafe.Pointer(&p)), 0)
	if e != 0 {
		return nil, fmt.Errorf("%w: io_uring_setup: %w", ErrUnsupported, e)
	}
	fd := int(r1)
	const need = featSingleMmap | featNoDrop | featExtArg
	if p.features&need != need {
		syscall.Close(fd)
		return nil, fmt.Errorf("%w: kernel lacks single mmap, no-drop or extended wait", ErrUnsupported)
	}
	r := &Ring{fd: fd}
	sqSize := p.sqOff[6] + p.sqEntries*4 // the index array ends the SQ ring
	cqSize := p.cqOff[5] + p.cqEntries*uint32(unsafe.Sizeof(CQE{}))
	mem, err := unix.Mmap(fd, offSQRing, int(max(sqSize, cqSize)), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("%w: mapping the rings: %w", ErrUnsupported, err)
	}
	r.mem = mem
	sqeMem, err := unix.Mmap(fd, offSQEs, int(p.sqEntries)*int(unsafe.Sizeof(SQE{})), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("%w: mapping the submission entries: %w", ErrUnsupported, err)
	}
	r.sqeMem = sqeMem
	r.sqHead = r.u32(p.sqOff[0])
	r.sqTail = r.u32(p.sqOff[1])
	r.sqMask = *r.u32(p.sqOff[2])
	r.sqes = unsafe.Slice((*SQE)(unsafe.Pointer(&sqeMem[0])), p.sqEntries)
	// The SQ index array maps slot i to entry i once and for all.
	array := unsafe.Slice(r.u32(p.sqOff[6]), p.sqEntries)
	for i := range array {
		array[i] = uint32(i)
	}
	r.cqHead = r.u32(p.cqOff[0])
	r.cqTail = r.u32(p.cqOff[1])
	r.cqMask = *r.u32(p.cqOff[2])
	r.cqes = unsafe.Slice((*CQE)(unsafe.Pointer(&mem[p.cqOff[5]])), p.cqEntries)
	r.tail = atomic.LoadUint32(r.sqTail)
	return r, nil
}

func (r *Ring) u32(off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&r.mem[off])) }

// Close releases the ring and its buffer rings. Requests still in flight are cancelled by
// the kernel.
func (r *Ring) Close() {
	for _, b := range r.bufs {
		b.unmap()
	}
	r.bufs = nil
	if r.sqeMem != nil {
		_ = unix.Munmap(r.sqeMem)
		r.sqeMem = nil
	}
	if r.mem != nil {
		_ = unix.Munmap(r.mem)
		r.mem = nil
	}
	if r.fd >= 0 {
		syscall.Close(r.fd)
		r.fd = -1
	}
}

// next returns a zeroed free SQE, or nil when the submission queue is full.
func (r *Ring) next() *SQE {
	if r.Full() {
		return nil
	}
	s := &r.sqes[r.tail&r.sqMask]
	*s = SQE{}
	r.tail++
	r.pending++
	return s
}

// RegisterFiles makes a table of n empty file slots; SetFile fills one, and Send and
// RecvMultishot then name the slot instead of a descriptor, which spares the kernel a file
// lookup per operation.
func (r *Ring) RegisterFiles(n int) error {
	reg := struct {
		nr, flags   uint32
		resv2, data uint64
		tags        uint64
	}{nr: uint32(n), flags: rsrcRegisterSparse}
	if _, _, e := syscall.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), registerFiles2, uintptr(unsafe.Pointer(&reg)), unsafe.Sizeof(reg), 0, 0); e != 0 {
		return fmt.Errorf("%w: registering %d files: %w", ErrUnsupported, n, e)
	}
	return nil
}

// SetFile puts fd in slot (the ring holds its own reference: the socket lives on after
// close(fd) until the slot is set again or the ring closes).
func (r *Ring) SetFile(slot int, fd int) error {
	fds := [1]int32{int32(fd)}
	upd := struct {
		offset, resv uint32
		fds          uint64
	}{offset: uint32(slot), fds: uint64(uintptr(unsafe.Pointer(&fds[0])))}
	_, _, e := syscall.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), registerFilesUpd, uintptr(unsafe.Pointer(&upd)), 1, 0, 0)
	if e != 0 {
		return fmt.Errorf("io_uring_register files update: %w", e)
	}
	return nil
}

// Send queues a send of p on file slot; the completion's Res is what was sent (all of p,
// or less on error) or -errno. p must not change until then. It reports false when the
// queue is full.
func (r *Ring) Send(slot int, p []byte, userData uint64) bool {
	s := r.next()
	if s == nil {
		return false
	}
	s.Opcode, s.Flags, s.Fd, s.UserData = opSend, sqeFixedFile, int32(slot), userData
	s.Addr, s.Len = uint64(uintptr(unsafe.Pointer(unsafe.SliceData(p)))), uint32(len(p))
	s.OpFlags = unix.MSG_WAITALL | unix.MSG_NOSIGNAL // all of p, retried by the kernel
	return true
}

// RecvMultishot queues a receive on file slot that completes each time data arrives, into a
// buffer of group bg, until it completes without FlagMore (EOF, an error, or no buffer left).
func (r *Ring) RecvMultishot(slot int, bg uint16, userData uint64) bool {
	s := r.next()
	if s == nil {
		return false
	}
	s.Opcode, s.Fd, s.UserData = opRecv, int32(slot), userData
	s.Flags, s.Ioprio, s.BufGroup = sqeFixedFile|sqeBufferSelect, recvMultishot, bg
	return true
}

// RecvMsgMultishot queues a receive on file slot like RecvMultishot's, made as recvmsg with
// room for controlLen bytes of control messages (receive timestamps) in each buffer; the
// buffer then holds a header, the control messages and the data (see Message). msg must
// stay alive until the receive ends.
func (r *Ring) RecvMsgMultishot(slot int, bg uint16, msg *unix.Msghdr, userData uint64) bool {
	s := r.next()
	if s == nil {
		return false
	}
	s.Opcode, s.Fd, s.UserData = opRecvMsg, int32(slot), userData
	s.Addr = uint64(uintptr(unsafe.Pointer(msg)))
	s.Flags, s.Ioprio, s.BufGroup = sqeFixedFile|sqeBufferSelect, recvMultishot, bg
	return true
}

// recvmsgOut is the header a multishot recvmsg writes at the start of each buffer
// (struct io_uring_recvmsg_out).
type recvmsgOut struct {
	namelen, controllen, payloadlen, flags uint32
}

// Message splits a buffer a multishot recvmsg filled (b is its first Res bytes; no name was
// asked for, and controlLen is the msghdr's Controllen) into the control messages the kernel
// wrote and the data received. ok is false when b is too short to be such a buffer. An empty
// data part in a completion without FlagMore is the end of the stream.
func Message(b []byte, controlLen int) (control, data []byte, ok bool) {
	const hdr = int(unsafe.Sizeof(recvmsgOut{}))
	if len(b) < hdr+controlLen {
		return nil, nil, false
	}
	h := (*recvmsgOut)(unsafe.Pointer(&b[0]))
	control = b[hdr : hdr+min(int(h.controllen), controlLen)]
	return control, b[hdr+controlLen:], true
}

// PollOnce queues a one-shot poll of fd for events (POLLIN, POLLOUT...); Res is the events
// that are ready.
func (r *Ring) PollOnce(fd int, events uint32, userData uint64) bool {
	s := r.next()
	if s == nil {
		return false
	}
	s.Opcode, s.Fd, s.UserData, s.OpFlags = opPollAdd, int32(fd), userData, events
	return true
}

// Pending is the number of SQEs queued and not yet submitted.
func (r *Ring) Pending() uint32 { return r.pending }

type getEventsArg struct {
	sigmask   uint64
	sigmaskSz uint32
	pad       uint32
	ts        uint64
}

// Submit submits what is queued and runs the ring's deferred work, so completions that are
// due are posted. It never blocks, so it is made without the runtime's system-call
// bookkeeping (which has the runtime's monitor thread watch the call and hand its P away).
func (r *Ring) Submit() error {
	atomic.StoreUint32(r.sqTail, r.tail)
	_, _, e := syscall.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(r.pending), 0, enterGetEvents, 0, 0)
	return r.entered(e)
}

// Wait submits what is queued and waits until at least n completions are ready or timeout
// (ns) passes. The ring's work is deferred to its thread, so with n larger than what can
// complete in the meantime the thread sleeps through the arrivals until the timeout and then
// handles them all. With hold, the wait is a raw system call that keeps the goroutine's P:
// cheaper, but fit only where other goroutines have Ps of their own.
func (r *Ring) Wait(n uint32, timeout int64, hold bool) error {
	atomic.StoreUint32(r.sqTail, r.tail)
	r.ts = unix.NsecToTimespec(timeout)
	r.arg = getEventsArg{ts: uint64(uintptr(unsafe.Pointer(&r.ts)))}
	var e syscall.Errno
	if hold {
		_, _, e = syscall.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(r.pending), uintptr(n),
			enterGetEvents|enterExtArg, uintptr(unsafe.Pointer(&r.arg)), unsafe.Sizeof(r.arg))
	} else {
		_, _, e = syscall.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(r.pending), uintptr(n),
			enterGetEvents|enterExtArg, uintptr(unsafe.Pointer(&r.arg)), unsafe.Sizeof(r.arg))
	}
	return r.entered(e)
}

// entered accounts for an io_uring_enter that returned e.
func (r *Ring) entered(e syscall.Errno) error {
	// Whatever the kernel took is submitted, even when the call reports an error.
	r.pending = r.tail - atomic.LoadUint32(r.sqHead)
	switch e {
	case 0, syscall.EINTR, syscall.ETIME, syscall.EAGAIN, syscall.EBUSY:
		// Interrupted, timed out, or short of room for completions: the caller takes
		// what is there and calls again.
		return nil
	default:
		return fmt.Errorf("io_uring_enter: %w", e)
	}
}

// Ready is the number of completions waiting to be handled.
func (r *Ring) Ready() int { return int(atomic.LoadUint32(r.cqTail) - *r.cqHead) }

// Full reports whether the submission queue has no free entry (Submit makes room).
func (r *Ring) Full() bool { return r.tail-atomic.LoadUint32(r.sqHead) > r.sqMask }

// Completions returns the completions ready now, as at most two slices of the CQ ring (it
// wraps); call Seen with their total count once they are handled.
func (r *Ring) Completions() ([]CQE, []CQE) {
	head := *r.cqHead
	tail := atomic.LoadUint32(r.cqTail)
	if head == tail {
		return nil, nil
	}
	h, t := head&r.cqMask, tail&r.cqMask
	if h < t {
		return r.cqes[h:t], nil
	}
	return r.cqes[h:], r.cqes[:t]
}

// Seen hands n completions back to the kernel.
func (r *Ring) Seen(n int) { atomic.StoreUint32(r.cqHead, *r.cqHead+uint32(n)) }

// BufRing is a ring of provided buffers of one size that the kernel fills for multishot
// receives and the owner hands back once it has read them.
type BufRing struct {
	group uint16
	size  int
	mask  uint16
	ring  []byte // entries (16 bytes each); the tail overlays the first entry's last field
	data  []byte // the buffers, size bytes each
	tail  uint16
}

// NewBufRing registers n buffers (a power of two, at most 32768) of size bytes as group g.
func (r *Ring) NewBufRing(g uint16, n int, size int) (*BufRing, error) {
	if n <= 0 || n > 1<<15 || n&(n-1) != 0 {
		return nil, fmt.Errorf("buffer ring of %d entries: want a power of two up to 32768", n)
	}
	ring, err := unix.Mmap(-1, 0, n*16, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("mapping a buffer ring: %w", err)
	}
	data, err := unix.Mmap(-1, 0, n*size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		_ = unix.Munmap(ring)
		return nil, fmt.Errorf("mapping buffers: %w", err)
	}
	reg := struct {
		ringAddr    uint64
		ringEntries uint32
		bgid        uint16
		pad         uint16
		resv        [3]uint64
	}{ringAddr: uint64(uintptr(unsafe.Pointer(&ring[0]))), ringEntries: uint32(n), bgid: g}
	if _, _, e := syscall.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), registerPbufRing, uintptr(unsafe.Pointer(&reg)), 1, 0, 0); e != 0 {
		_ = unix.Munmap(ring)
		_ = unix.Munmap(data)
		return nil, fmt.Errorf("%w: registering a buffer ring: %w", ErrUnsupported, e)
	}
	b := &BufRing{group: g, size: size, mask: uint16(n - 1), ring: ring, data: data}
	for i := 0; i < n; i++ {
		b.put(uint16(i))
	}
	b.publish()
	r.bufs = append(r.bufs, b)
	return b, nil
}

// Group is the buffer group id to receive into.
func (b *BufRing) Group() uint16 { return b.group }

// Bytes is buffer id's first n bytes.
func (b *BufRing) Bytes(id uint16, n int) []byte {
	off := int(id) * b.size
	return b.data[off : off+n : off+b.size]
}

// Recycle hands buffer id back to the kernel (visible after Publish).
func (b *BufRing) Recycle(id uint16) { b.put(id) }

// Publish makes recycled buffers visible to the kernel.
func (b *BufRing) Publish() { b.publish() }

func (b *BufRing) put(id uint16) {
	e := b.ring[int(b.tail&b.mask)*16:]
	*(*uint64)(unsafe.Pointer(&e[0])) = uint64(uintptr(unsafe.Pointer(&b.data[int(id)*b.size])))
	*(*uint32)(unsafe.Pointer(&e[8])) = uint32(b.size)
	*(*uint16)(unsafe.Pointer(&e[12])) = id
	b.tail++
}

// publish stores the tail, which shares a 32-bit word with the first entry's buffer id, with
// one atomic store of that word (little-endian: the id is its low half).
func (b *BufRing) publish() {
	w := (*uint32)(unsafe.Pointer(&b.ring[12]))
	atomic.StoreUint32(w, uint32(b.tail)<<16|atomic.LoadUint32(w)&0xffff)
}

func (b *BufRing) unmap() {
	_ = unix.Munmap(b.ring)
	_ = unix.Munmap(b.data)
}

func littleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}
