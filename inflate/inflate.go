// Package inflate reads what another program sent (a target's profile or trace, a peer's
// stored run) with a bound on its size once decompressed: a few megabytes of gzip that
// expand to gigabytes are refused at the bound, not held in memory.
package inflate

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
)

// TooLargeError is what a bounded read returns when its input holds more than Limit bytes.
type TooLargeError struct{ Limit int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("larger than the %s limit", size(e.Limit))
}

// size is n bytes in the largest whole unit.
func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Reader reads at most a limit of bytes from its source; one byte more fails the read with
// a *TooLargeError, and Over reports it.
type Reader struct {
	r     io.Reader
	left  int64
	limit int64
	over  bool
}

// NewReader bounds r to limit bytes.
func NewReader(r io.Reader, limit int64) *Reader { return &Reader{r: r, left: limit, limit: limit} }

// Read reads from the source until the limit; past it, it fails if the source has more.
func (b *Reader) Read(p []byte) (int, error) {
	if b.over {
		return 0, &TooLargeError{b.limit}
	}
	if b.left <= 0 {
		var one [1]byte
		n, err := io.ReadFull(b.r, one[:])
		if n > 0 {
			b.over = true
			return 0, &TooLargeError{b.limit}
		}
		if err == io.ErrUnexpectedEOF {
			err = io.EOF
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

// Over reports whether the source held more than the limit.
func (b *Reader) Over() bool { return b.over }

// ReadAll reads r to its end, at most limit bytes: more is a *TooLargeError.
func ReadAll(r io.Reader, limit int64) ([]byte, error) {
	return io.ReadAll(NewReader(r, limit))
}

// Gzip returns b, a gzip stream (of one or more members), decompressed, at most limit bytes
// of it: more is a *TooLargeError, found before more than limit bytes are held.
func Gzip(b []byte, limit int64) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	return ReadAll(zr, limit)
}

// IsTooLarge reports whether err is, or wraps, a *TooLargeError.
func IsTooLarge(err error) bool {
	var t *TooLargeError
	return errors.As(err, &t)
}
