//go:build !unix

package procfs

import (
	"io"
	"os"
)

// readSmall reads a small file into buf and returns the part read; a file longer than buf is
// an error.
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
