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
		sse    bool
		in     string
		count  int32
		nbytes int64
	}{
		{"one gRPC message", false, string(grpcFrames(1, 12)), 1, 12},
		{"empty gRPC messages count", false, string(grpcFrames(3, 0)), 3, 0},
		{"a partial gRPC message is not counted", false, string(grpcFrames(2, 7)[:19]), 1, 14},
		{"SSE LF events", true, "data: a\n\ndata: b\nid: 2\n\n", 2, 0},
		{"SSE CRLF and CR line ends", true, "data: a\r\n\r\ndata: b\r\rdata: c\r\n", 2, 0},
		{"SSE comments are not events", true, ": keep-alive\n\n:\n\ndata: x\n\n", 1, 0},
		{"SSE blank lines between events are not events", true, "\n\n\ndata: x\n\n\n\n", 1, 0},
		{"SSE event not yet ended", true, "data: a\n", 0, 0},
	} {
		var m h2msgs
		m.lineStart = true
		if c.sse {
			m.events([]byte(c.in))
		} else {
			m.feed([]byte(c.in))
		}
		if m.count != c.count || m.bytes != c.nbytes {
			t.Errorf("%s: %d messages of %d bytes, want %d of %d", c.name, m.count, m.bytes, c.count, c.nbytes)
		}
	}
}

// FuzzH2MsgsSplit: however a response's bytes are split into DATA frames, the messages and
// events counted are the same as from the bytes in one piece.
func FuzzH2MsgsSplit(f *testing.F) {
	f.Add(grpcFrames(3, 10), uint8(7), false)
	f.Add([]byte("data: a\r\n\r\n: c\n\ndata: b\n\n"), uint8(3), true)
	f.Fuzz(func(t *testing.T, b []byte, step uint8, sse bool) {
		one := func(parts ...[]byte) h2msgs {
			m := h2msgs{}
			m.lineStart = true
			for _, p := range parts {
				if sse {
					m.events(p)
				} else {
					m.feed(p)
				}
			}
			return m
		}
		whole := one(b)
		var parts [][]byte
		n := int(step%16) + 1
		for i := 0; i < len(b); i += n {
			parts = append(parts, b[i:min(i+n, len(b))])
		}
		split := one(parts...)
		if whole.count != split.count || whole.bytes != split.bytes {
			t.Errorf("%q in pieces of %d: %d messages (%d bytes); in one piece %d (%d)", b, n, split.count, split.bytes, whole.count, whole.bytes)
		}
	})
}
