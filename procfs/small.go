package procfs

import (
	"strconv"
	"sync"
)

// scratch is the buffers one reading uses: the file's bytes, a directory's entries, and two
// paths. Arrays on the stack escape to the heap through the system calls that fill them, so
// a reading takes a scratch from a pool and gives it back.
type scratch struct {
	data  [8192]byte
	dents [4096]byte
	path  [128]byte
	dir   [64]byte
}

var scratches = sync.Pool{New: func() any { return new(scratch) }}

func getScratch() *scratch  { return scratches.Get().(*scratch) }
func putScratch(s *scratch) { scratches.Put(s) }

// field returns the n-th (from 0) field of b, fields separated by spaces, tabs or newlines;
// nil when b has fewer. /proc files are read several times a second during every step:
// this and decInt read them without allocating (strings.Fields made a slice of strings each
// time, most of a step's garbage when nothing else allocates).
func field(b []byte, n int) []byte {
	i := 0
	for {
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		if i == len(b) {
			return nil
		}
		j := i
		for j < len(b) && !isSpace(b[j]) {
			j++
		}
		if n == 0 {
			return b[i:j]
		}
		n, i = n-1, j
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' }

// countFields is how many fields b has.
func countFields(b []byte) int {
	n := 0
	for i := 0; i < len(b); {
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		if i < len(b) {
			n++
		}
		for i < len(b) && !isSpace(b[i]) {
			i++
		}
	}
	return n
}

// decInt parses a decimal field.
func decInt(b []byte) (int64, error) { return strconv.ParseInt(string(b), 10, 64) }
