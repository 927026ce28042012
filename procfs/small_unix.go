//go:build unix

package procfs

import (
	"io"
	"os"
	"strings"
	"syscall"
)

// readSmall reads a small /proc file (a process's stat, statm, a thread's schedstat) into buf
// and returns the part read: the kernel writes such a file whole on the first read. It reads
// with the system calls themselves, not an os.File (three allocations a file), since these
// files are read several times a second during every step. A file longer than buf is an error.
func readSmall(path string, buf []byte) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	for err == syscall.EINTR {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: strings.Clone(path), Err: err}
	}
	defer syscall.Close(fd)
	n := 0
	for n < len(buf) {
		m, err := syscall.Read(fd, buf[n:])
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return nil, &os.PathError{Op: "read", Path: strings.Clone(path), Err: err}
		case m == 0:
			return buf[:n], nil
		}
		n += m
	}
	return nil, &os.PathError{Op: "read", Path: strings.Clone(path), Err: io.ErrShortBuffer}
}
