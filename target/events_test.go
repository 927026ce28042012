package target

import (
	"strings"
	"testing"
	"time"
)

// TestEvents: /events sends count events on its schedule, each with a comment before it.
func TestEvents(t *testing.T) {
	s := start(t, Config{})
	t0 := time.Now()
	code, h, body := get(t, s.URL()+"/events?count=3&delay=30ms&gap=5ms")
	took := time.Since(t0)
	want := ": keep-alive\n\nid: 0\ndata: {\"n\":0}\n\n: keep-alive\n\nid: 1\ndata: {\"n\":1}\n\n: keep-alive\n\nid: 2\ndata: {\"n\":2}\n\n"
	if code != 200 || h.Get("Content-Type") != "text/event-stream" || string(body) != want {
		t.Errorf("GET /events = %d %q (Content-Type %q); want 200 text/event-stream %q", code, body, h.Get("Content-Type"), want)
	}
	if took < 40*time.Millisecond {
		t.Errorf("the stream took %v; want at least its 30ms + 2 x 5ms schedule", took)
	}
}

func TestEventsBadQuery(t *testing.T) {
	s := start(t, Config{})
	for _, q := range []string{"count=-1", "count=x", "delay=abc", "gap=-5ms", "size=3"} {
		code, _, body := get(t, s.URL()+"/events?"+q)
		name, _, _ := strings.Cut(q, "=")
		if code != 400 || !strings.Contains(string(body), "/events "+name+"=") {
			t.Errorf("GET /events?%s = %d %q; want 400 naming %s", q, code, body, name)
		}
	}
}
