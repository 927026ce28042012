package procfs

import (
	"bytes"
	"encoding/binary"
	"syscall"
)

// eachTask calls f with the name of each entry of the directory dir but "." and "..", in
// the kernel's order, until f returns false; it returns how many it called f with. It reads
// the directory's entries itself (getdents64) into buf: os.ReadDir makes an object and a
// string per thread, every time the scheduler's times are read.
func eachTask(dir string, buf []byte, f func(name []byte) bool) (int, error) {
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
