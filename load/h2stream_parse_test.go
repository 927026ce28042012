package load

import (
	"encoding/binary"
	"testing"
)

// grpcFrames is n gRPC messages of size bytes each, length-prefixed.
func grpcFrames(n, size int) []byte {
	var b []byte
	for range n {
		var p [5]byte
		binary.BigEndian.PutUint32(p[1:], uint32(size))
		b = append(b, p[:]...)
		b = append(b, make([]byte, size)...)
	}
	return b
}

func TestH2MsgsCounts(t *testing.T) {
	for _, c := range []struct {
		name   string
		in     string
		count  int32
		nbytes int64
	}{
		{"one gRPC message", string(grpcFrames(1, 12)), 1, 12},
		{"empty gRPC messages count", string(grpcFrames(3, 0)), 3, 0},
		{"a partial gRPC message is not counted", string(grpcFrames(2, 7)[:19]), 1, 14},
	} {
		var m h2msgs
		m.feed([]byte(c.in))
		if m.count != c.count || m.bytes != c.nbytes {
			t.Errorf("%s: %d messages of %d bytes, want %d of %d", c.name, m.count, m.bytes, c.count, c.nbytes)
		}
	}
}

// FuzzH2MsgsSplit: however a response's bytes are split into DATA frames, the gRPC messages
// counted are the same as from the bytes in one piece.
func FuzzH2MsgsSplit(f *testing.F) {
	f.Add(grpcFrames(3, 10), uint8(7))
	f.Fuzz(func(t *testing.T, b []byte, step uint8) {
		one := func(parts ...[]byte) h2msgs {
			m := h2msgs{}
			for _, p := range parts {
				m.feed(p)
			}
			return m
		}
		whole := one(b)
		n := int(step%16) + 1
		split := one(pieces(b, n)...)
		if whole.count != split.count || whole.bytes != split.bytes {
			t.Errorf("%q in pieces of %d: %d messages (%d bytes); in one piece %d (%d)", b, n, split.count, split.bytes, whole.count, whole.bytes)
		}
	})
}

// pieces splits b into pieces of n bytes (the last one shorter).
func pieces(b []byte, n int) [][]byte {
	var parts [][]byte
	for i := 0; i < len(b); i += n {
		parts = append(parts, b[i:min(i+n, len(b))])
	}
	return parts
}
