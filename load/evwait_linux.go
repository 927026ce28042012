//go:build linux

package load

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// epollPwait2 waits up to d nanoseconds (d < 0: without limit) for events on epfd, with
// epoll_pwait2's nanosecond timeout (Linux 5.11), as a blocking system call: the runtime
// hands the thread's P to other goroutines when it blocks long.
func epollPwait2(epfd int, events []syscall.EpollEvent, d int64) (int, syscall.Errno) {
	var ts unix.Timespec
	var p unsafe.Pointer
	if d >= 0 {
		ts = unix.NsecToTimespec(d)
		p = unsafe.Pointer(&ts)
	}
	r, _, e := syscall.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), uintptr(p), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), 0
}
