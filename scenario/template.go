package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"
)

// template is a text with {{...}} placeholders, compiled once. The placeholders are
//
//	{{counter}} or {{counter N}}   1, 2, 3... (or from N), shared by all connections
//	{{random A B}}                 a random integer in [A, B]
//	{{choice x y z}}               one of the words, at random
//	{{line FILE}}                  the next line of FILE, in turn, shared by all connections
//	{{uuid}}                       a random version 4 UUID
type template struct {
	parts []part
}

// part is a literal (gen == nil) or a generated value.
type part struct {
	lit string
	gen func(r *rand.Rand, b []byte) []byte
}

// static reports whether the template has no placeholders.
func (t *template) static() bool {
	for _, p := range t.parts {
		if p.gen != nil {
			return false
		}
	}
	return true
}

// render appends the template's text to b.
func (t *template) render(r *rand.Rand, b []byte) []byte {
	for _, p := range t.parts {
		if p.gen == nil {
			b = append(b, p.lit...)
		} else {
			b = p.gen(r, b)
		}
	}
	return b
}

// parseTemplate compiles s; files named by {{line}} are read relative to dir.
func parseTemplate(s, dir string) (*template, error) { return parse(s, dir, true) }

// checkTemplate checks s as parseTemplate does, but of the files named by {{line}} it
// only checks that they can be read (validation need not hold a copy of each).
func checkTemplate(s, dir string) error {
	_, err := parse(s, dir, false)
	return err
}

func parse(s, dir string, load bool) (*template, error) {
	t := &template{}
	for {
		i := strings.Index(s, "{{")
		if i < 0 {
			break
		}
		j := strings.Index(s[i:], "}}")
		if j < 0 {
			return nil, errors.New("template: {{ without }}")
		}
		if i > 0 {
			t.parts = append(t.parts, part{lit: s[:i]})
		}
		gen, err := placeholder(strings.Fields(s[i+2:i+j]), dir, load)
		if err != nil {
			return nil, fmt.Errorf("template {{%s}}: %w", strings.TrimSpace(s[i+2:i+j]), err)
		}
		t.parts = append(t.parts, part{gen: gen})
		s = s[i+j+2:]
	}
	if s != "" {
		t.parts = append(t.parts, part{lit: s})
	}
	return t, nil
}

func placeholder(f []string, dir string, load bool) (func(*rand.Rand, []byte) []byte, error) {
	if len(f) == 0 {
		return nil, errors.New("empty placeholder")
	}
	args := f[1:]
	switch f[0] {
	case "counter":
		start := int64(1)
		if len(args) > 1 {
			return nil, errors.New("want {{counter}} or {{counter START}}")
		}
		if len(args) == 1 {
			n, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("bad start %q", args[0])
			}
			start = n
		}
		var c atomic.Int64
		c.Store(start - 1)
		return func(_ *rand.Rand, b []byte) []byte { return strconv.AppendInt(b, c.Add(1), 10) }, nil
	case "random":
		if len(args) != 2 {
			return nil, errors.New("want {{random MIN MAX}}")
		}
		lo, err1 := strconv.ParseInt(args[0], 10, 64)
		hi, err2 := strconv.ParseInt(args[1], 10, 64)
		if err1 != nil || err2 != nil || hi < lo {
			return nil, errors.New("want two integers MIN <= MAX")
		}
		span := uint64(hi-lo) + 1
		return func(r *rand.Rand, b []byte) []byte {
			return strconv.AppendInt(b, lo+int64(r.Uint64N(span)), 10)
		}, nil
	case "choice":
		if len(args) == 0 {
			return nil, errors.New("want {{choice A B ...}}")
		}
		return func(r *rand.Rand, b []byte) []byte { return append(b, args[r.IntN(len(args))]...) }, nil
	case "line":
		if len(args) != 1 {
			return nil, errors.New("want {{line FILE}}")
		}
		if !load {
			f, err := openRegular(resolve(dir, args[0]))
			if err != nil {
				return nil, fmt.Errorf("reading lines: %w", err)
			}
			f.Close()
			return func(_ *rand.Rand, b []byte) []byte { return b }, nil
		}
		lines, err := readLines(resolve(dir, args[0]))
		if err != nil {
			return nil, err
		}
		var next atomic.Uint64
		return func(_ *rand.Rand, b []byte) []byte {
			return append(b, lines[(next.Add(1)-1)%uint64(len(lines))]...)
		}, nil
	case "uuid":
		if len(args) != 0 {
			return nil, errors.New("{{uuid}} takes no arguments")
		}
		return appendUUID, nil
	}
	return nil, fmt.Errorf("unknown placeholder %q (want counter, random, choice, line or uuid)", f[0])
}

// appendUUID appends a random version 4 UUID.
func appendUUID(r *rand.Rand, b []byte) []byte {
	var u [16]byte
	for i := 0; i < 16; i += 8 {
		v := r.Uint64()
		for k := 0; k < 8; k++ {
			u[i+k] = byte(v >> (8 * k))
		}
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	const hex = "0123456789abcdef"
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b = append(b, '-')
		}
		b = append(b, hex[c>>4], hex[c&15])
	}
	return b
}

// maxLines bounds a {{line}} file's lines (each costs 16 bytes besides its text).
const maxLines = 1 << 22

// readLines reads the non-empty lines of a regular file of at most MaxInputFile bytes.
// The lines share the file's one copy in memory.
func readLines(path string) ([]string, error) {
	b, err := ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading lines: %w", err)
	}
	if len(b) == 0 {
		return nil, fmt.Errorf("%s has no lines", path)
	}
	// The file's bytes are never changed again: the lines are slices of them, not copies.
	lines := make([]string, 0, min(bytes.Count(b, []byte{'\n'})+1, maxLines))
	for rest := unsafe.String(&b[0], len(b)); rest != ""; {
		l, more, _ := strings.Cut(rest, "\n")
		if l = strings.TrimRight(l, "\r"); l != "" {
			if len(lines) == maxLines {
				return nil, fmt.Errorf("%s has over %d lines, the limit for {{line}}", path, maxLines)
			}
			lines = append(lines, l)
		}
		rest = more
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("%s has no lines", path)
	}
	return lines, nil
}
