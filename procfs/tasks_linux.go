package procfs

import (
	"bytes"
	"encoding/binary"
	"syscall"
	"unsafe"
)

// eachEntry calls f with the name of each entry of the directory dir but "." and "..", in
// the kernel's order, until f returns false; it returns how many it called f with. It reads
// the directory's entries itself (getdents64) into buf: os.ReadDir makes an object and a
// string per thread, every time the scheduler's times are read.
func eachEntry(dir string, buf []byte, f func(name []byte) bool) (int, error) {
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer syscall.Close(fd)
	n := 0
	for {
		m, err := syscall.ReadDirent(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return n, err
		}
		if m <= 0 {
			return n, nil
		}
		// struct linux_dirent64: ino (8 bytes), off (8), reclen (2), type (1), name (NUL-ended).
		for b := buf[:m]; len(b) >= 19; {
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				return n, syscall.EINVAL
			}
			name := b[19:reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			b = b[reclen:]
			if string(name) == "." || string(name) == ".." {
				continue
			}
			n++
			if !f(name) {
				return n, nil
			}
		}
	}
}

// readLink reads the target of the symbolic link at path (which ends with a NUL byte) into buf
// and returns it. It calls readlinkat itself: os.Readlink makes the path's C string, a buffer
// and a string for every link, and a walk of every process's open files reads thousands.
func readLink(path, buf []byte) ([]byte, error) {
	if len(path) == 0 || path[len(path)-1] != 0 || len(buf) == 0 {
		return nil, syscall.EINVAL
	}
	cwd := -100 // AT_FDCWD
	for {
		n, _, errno := syscall.Syscall6(syscall.SYS_READLINKAT, uintptr(cwd), uintptr(unsafe.Pointer(&path[0])),
			uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0)
		switch {
		case errno == syscall.EINTR:
			continue
		case errno != 0:
			return nil, errno
		}
		return buf[:n], nil
	}
}
