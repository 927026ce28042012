package load

import "testing"

func TestSSEScanCounts(t *testing.T) {
	for _, c := range []struct {
		name string
		in   string
		want int32
	}{
		{"LF events", "data: a\n\ndata: b\nid: 2\n\n", 2},
		{"CRLF and CR line ends", "data: a\r\n\r\ndata: b\r\rdata: c\r\n", 2},
		{"comments are not events", ": keep-alive\n\n:\n\ndata: x\n\n", 1},
		{"blank lines between events are not events", "\n\n\ndata: x\n\n\n\n", 1},
		{"an event not yet ended is not counted", "data: a\n", 0},
		{"a field without a value is an event", "data\n\n", 1},
		{"a comment inside an event does not end it", "data: a\n: c\ndata: b\n\n", 1},
	} {
		var s sseScan
		if n := s.events([]byte(c.in)); n != c.want {
			t.Errorf("%s: events(%q) = %d, want %d", c.name, c.in, n, c.want)
		}
	}
}

// FuzzSSEScanSplit: however a body's bytes are split into reads (or DATA frames), the events
// counted are the same as from the bytes in one piece.
func FuzzSSEScanSplit(f *testing.F) {
	f.Add([]byte("data: a\r\n\r\n: c\n\ndata: b\n\n"), uint8(3))
	f.Add([]byte("data: a\r\r\ndata: b\r\n\r\n"), uint8(1))
	f.Fuzz(func(t *testing.T, b []byte, step uint8) {
		var whole, split sseScan
		all := whole.events(b)
		n := int(step%16) + 1
		var got int32
		for _, p := range pieces(b, n) {
			got += split.events(p)
		}
		if got != all {
			t.Errorf("%q in pieces of %d: %d events; in one piece %d", b, n, got, all)
		}
	})
}

func TestIsEventStream(t *testing.T) {
	for _, c := range []struct {
		v    string
		want bool
	}{
		{"text/event-stream", true},                // as servers send it
		{"text/event-stream; charset=utf-8", true}, // parameters aside
		{" Text/Event-Stream", true},               // case and leading space do not matter
		{"text/event", false},                      // too short
		{"application/json", false},                // another type
		{"x text/event-stream", false},             // not at the start
	} {
		if got := isEventStream(c.v); got != c.want {
			t.Errorf("isEventStream(%q) = %v, want %v", c.v, got, c.want)
		}
		if got := isEventStream([]byte(c.v)); got != c.want {
			t.Errorf("isEventStream([]byte(%q)) = %v, want %v", c.v, got, c.want)
		}
	}
}
