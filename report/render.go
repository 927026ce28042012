package report

import (
	"fmt"
	"io"
)

// render runs a renderer that writes to w and returns the first write error, wrapped with
// what was being written; the renderer itself need not check each write.
func render(w io.Writer, what string, f func(io.Writer)) error {
	ew := &errWriter{w: w}
	f(ew)
	if ew.err != nil {
		return fmt.Errorf("writing %s: %w", what, ew.err)
	}
	return nil
}

// errWriter passes writes to w until one fails, then keeps that error and writes nothing more.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	if err != nil {
		e.err = err
	}
	return n, err
}
