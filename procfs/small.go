package procfs

import (
	"io"
	"os"
)

// readSmall reads a small /proc file (a process's stat, statm, a thread's schedstat) into buf
// and returns the part read: the kernel writes such a file whole on the first read. It is
// os.ReadFile without its allocations (a file that reports size 0 starts a 512-byte buffer
// and grows it), since these files are read several times a second during every step.
// A file longer than buf is an error.
func readSmall(path string, buf []byte) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	n, err := io.ReadFull(f, buf)
	switch err {
	case io.ErrUnexpectedEOF, io.EOF:
		return buf[:n], nil
	case nil:
		return nil, &os.PathError{Op: "read", Path: path, Err: io.ErrShortBuffer}
	}
	return nil, err
}
