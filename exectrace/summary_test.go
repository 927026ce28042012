package exectrace

import (
	"strings"
	"testing"
	"time"
)

func TestShort(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},                          // zero has its unit
		{850, "850ns"},                     // below a microsecond: whole nanoseconds
		{8 * time.Microsecond, "8us"},      // whole numbers lose their ".0"
		{310 * time.Microsecond, "310us"},  // above 10: no decimals
		{1200 * time.Microsecond, "1.2ms"}, // below 10: one decimal
		{2050 * time.Millisecond, "2s"},    // rounds to one decimal below 10
		{12500 * time.Millisecond, "12s"},  // above 10 s: whole seconds (rounded to even)
		{9960 * time.Microsecond, "10ms"},  // 9.96 rounds up to 10.0 and prints without its decimal
	} {
		if got := Short(tt.d); got != tt.want {
			t.Errorf("Short(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

func TestLineShape(t *testing.T) {
	s := &Summary{Span: time.Second, GOMAXPROCS: 2, BusyPs: 1.4, GCCycles: 41, STWTotal: 1200 * time.Microsecond,
		STWMax: 310 * time.Microsecond, GCWorkers: 90 * time.Millisecond, GCAssist: 30 * time.Millisecond, Running: time.Second,
		Sched: Latency{Count: 10, P50: 8 * time.Microsecond, P99: 1200 * time.Microsecond, Max: 3 * time.Millisecond}}
	want := "GC 41.0 cycles/s, STW 1.2ms (max 310us), GC CPU 12% (assist 3%), sched latency p50 8us p99 1.2ms, GOMAXPROCS 2 (1.4 busy)"
	if got := s.Line(); got != want {
		t.Errorf("Line() = %q\nwant      %q", got, want)
	}
}

func TestReadRejects(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want string
	}{
		{"", "not a Go execution trace"},                           // empty body
		{"<html>404</html>", "not a Go execution trace"},           // a page, not a trace
		{"go 1.21 trace\x00\x00\x00", "predates go 1.22"},          // the old format
		{"go 1.x trace\x00\x00\x00", "trace header version"},       // a broken header
		{"go 1.23 trace\x00\x00\x00\x01\x02\x03", "reading trace"}, // a truncated new one
	} {
		_, err := Read(strings.NewReader(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Read(%q) = %v, want an error containing %q", tt.in, err, tt.want)
		}
	}
}

func TestSite(t *testing.T) {
	for _, tt := range []struct {
		frames     []string
		site, call string
	}{
		{[]string{"runtime.chanrecv1", "main.wait", "net/http.HandlerFunc.ServeHTTP"}, "main.wait (in runtime.chanrecv1)", "main.wait"}, // the primitive and the program's frame
		{[]string{"main.spin", "net/http.HandlerFunc.ServeHTTP"}, "main.spin", "main.spin"},                                             // the program's frame is innermost
		{[]string{"internal/poll.(*FD).Read", "net/http.(*conn).serve"}, "internal/poll.(*FD).Read", "internal/poll.(*FD).Read"},
		{[]string{"runtime.traceLocker.GCMarkAssistStart", "runtime.gcAssistAlloc", "runtime.mallocgc", "net/textproto.(*Reader).ReadLine", "net/http.(*conn).serve"}, "net/textproto.(*Reader).ReadLine (in runtime.gcAssistAlloc)", "net/textproto.(*Reader).ReadLine"}, // plumbing allocated: its first frame outside the runtime                          // plumbing only: the innermost
		{[]string{"runtime.traceLocker.GCMarkAssistStart", "runtime.gcAssistAlloc", "main.alloc"}, "main.alloc (in runtime.gcAssistAlloc)", "main.alloc"},                                                                                                                 // the tracer's frames are skipped
		{nil, "(no stack)", ""}, // nothing to name
	} {
		var b BlockStack
		for _, f := range tt.frames {
			b.Frames = append(b.Frames, Frame{Func: f})
		}
		if got := b.Site(); got != tt.site {
			t.Errorf("Site(%v) = %q, want %q", tt.frames, got, tt.site)
		}
		if got := b.Function(); got != tt.call {
			t.Errorf("Function(%v) = %q, want %q", tt.frames, got, tt.call)
		}
	}
}
