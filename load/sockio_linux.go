//go:build linux

package load

import (
	"syscall"
	"unsafe"
)

// send writes p to the connected, non-blocking socket fd with sendto(2): a socket call skips
// the file layer write(2) goes through (position lock, fsnotify), and MSG_NOSIGNAL turns a
// write to a reset connection into EPIPE instead of a signal. The call never blocks, so it
// is made without the runtime's system-call bookkeeping.
func send(fd int, p []byte) (int, syscall.Errno) {
	if len(p) == 0 {
		return 0, 0
	}
	r, _, e := syscall.RawSyscall6(syscall.SYS_SENDTO, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), syscall.MSG_NOSIGNAL, 0, 0)
	return int(r), e
}

// recv reads from the connected, non-blocking socket fd into p with recvfrom(2), as send
// writes: no file layer, no runtime bookkeeping.
func recv(fd int, p []byte) (int, syscall.Errno) {
	r, _, e := syscall.RawSyscall6(syscall.SYS_RECVFROM, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), 0, 0, 0)
	return int(r), e
}
