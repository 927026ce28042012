package profcap

import "testing"

func TestFrameIs(t *testing.T) {
	for _, c := range []struct {
		fn    string
		class frameClass
		want  bool
	}{
		{"runtime.gcStart", frameGC, true},                   // an exact row of two classes: GC work
		{"runtime.gcStart", frameGCWait, true},               // and a goroutine held for the collector
		{"runtime.gcStartX", frameGC, false},                 // exact rows match the whole name only
		{"runtime.mallocgcSmallNoscan", frameAlloc, true},    // a prefix row: every mallocgc variant
		{"runtime.newobject", frameRuntime, true},            // runtime.* is the runtime's
		{"runtime.newobject", frameServing, true},            // and atop every CPU profile
		{"runtime/pprof.profileWriter", frameRuntime, false}, // runtime/pprof is not runtime.
		{"runtime/pprof.profileWriter", frameIdle, true},     // but a profiler's goroutine
		{"sync.(*Mutex).lockSlow", frameLock, true},          // a lock's slow path, passed over in contention
		{"sync.(*Mutex).Lock", frameLock, false},             // the primitive itself names the site
		{"net/http.(*conn).serve", frameServing, true},       // the server's plumbing
		{"net/http.(*conn).serve", frameIdle, false},         // a connection serving a request is not idle
		{"main.handler", frameServing, false},                // the application's code is never plumbing
		{"__tsan_read", frameNobody, true},                   // the race detector works for its caller
		{"runtime.asyncPreempt", frameNobody, true},          // and so does a preemption
		{"crypto/tls.(*Conn).Read", frameRead, true},         // a read of a connection
		{"crypto/tls.(*Conn).Write", frameRead, false},       // a write is not
	} {
		if got := frameIs(c.fn, c.class); got != c.want {
			t.Errorf("frameIs(%q, %b) = %v, want %v", c.fn, c.class, got, c.want)
		}
	}
}

// TestFramesOnce: the table names each frame once (two rows of one frame would say two
// things of it in two places).
func TestFramesOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range frames {
		if seen[f.name] {
			t.Errorf("frame %q has two rows; give it one with both classes", f.name)
		}
		seen[f.name] = true
		if f.class == 0 || f.class >= 1<<numFrameClasses {
			t.Errorf("frame %q: class %b, want one of the frame classes", f.name, f.class)
		}
	}
}
