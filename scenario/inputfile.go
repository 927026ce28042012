package scenario

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// MaxInputFile is the largest file a scenario reads into memory: a request body
// (--body-file, a mix's body_file), a mix or a {{line FILE}} list.
const MaxInputFile = 64 << 20

// ReadFile reads a regular file of at most MaxInputFile bytes. Devices (/dev/zero), FIFOs
// and sockets are refused without blocking (the file is opened non-blocking and checked
// before a byte is read), as is a larger file, each with one line naming it.
func ReadFile(path string) ([]byte, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Read into a buffer of the file's size (ReadAll alone would double its way up to it).
	b := make([]byte, 0, 512)
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		b = make([]byte, 0, st.Size()+1)
	}
	b, err = readAll(io.LimitReader(f, MaxInputFile+1), b)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(b) > MaxInputFile {
		return nil, tooLarge(path, int64(len(b)))
	}
	return b, nil
}

// readAll appends what r holds to b.
func readAll(r io.Reader, b []byte) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// openRegular opens path for reading if it is a regular file of at most MaxInputFile bytes.
func openRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	switch m := st.Mode(); {
	case m.IsRegular():
	case m&fs.ModeNamedPipe != 0:
		f.Close()
		return nil, fmt.Errorf("%s is a FIFO, not a regular file", path)
	case m.IsDir():
		f.Close()
		return nil, fmt.Errorf("%s is a directory, not a regular file", path)
	case m&(fs.ModeDevice|fs.ModeCharDevice) != 0:
		f.Close()
		return nil, fmt.Errorf("%s is a device, not a regular file", path)
	default:
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file (%v)", path, m.Type())
	}
	if st.Size() > MaxInputFile {
		f.Close()
		return nil, tooLarge(path, st.Size())
	}
	return f, nil
}

func tooLarge(path string, size int64) error {
	return fmt.Errorf("%s is %s, over the %s limit for files held in memory", path, bytesString(size), bytesString(MaxInputFile))
}

// bytesString is n in B, KiB, MiB or GiB.
func bytesString(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v, u := float64(n), 0
	for v >= 1024 && u < len(units)-1 {
		v, u = v/1024, u+1
	}
	if u == 0 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f %s", v, units[u])
}
