package profcap

import (
	"math/bits"
	"strings"
)

// frameClass is a kind of frame profcap knows by its function's name; a frame may be of
// several kinds.
type frameClass uint16

const (
	frameGC         frameClass = 1 << iota // the collector's work: a CPU sample with it is GC
	frameAlloc                             // heap allocation's entry points: a CPU sample with it allocates
	frameGCWait                            // where the runtime holds up an allocating goroutine for the collector
	frameRuntime                           // the runtime and the internals of blocking primitives, passed over to name a wait
	frameLock                              // the lock implementations' slow paths, passed over to name a contention
	frameServing                           // a Go server's plumbing at the top of every CPU profile's cumulative table
	frameIdle                              // goroutines that are never a request's nor a leak's (accept loops, profilers)
	frameNobody                            // the race detector's runtime and asynchronous preemption: their caller's work
	frameRead                              // a read of a network connection
	numFrameClasses = iota
)

// How a row of frames matches a function's name.
const (
	exact  = false
	prefix = true
)

// frames is the one table of the frames profcap classifies by name.
var frames = []struct {
	name   string
	prefix bool
	class  frameClass
}{
	{"runtime.", prefix, frameRuntime | frameServing},
	{"internal/", prefix, frameRuntime | frameServing},
	{"sync.runtime_", prefix, frameRuntime},
	{"syscall.", prefix, frameRuntime},
	{"sync.(*Mutex).lockSlow", prefix, frameRuntime | frameLock},
	{"sync.(*RWMutex).rUnlockSlow", prefix, frameRuntime | frameLock},
	{"sync.(*Mutex).unlockSlow", prefix, frameRuntime | frameLock},

	// The collector: background and assist marking, root and object scanning, sweeping
	// and scavenging; and where it holds up the goroutines that allocate.
	{"runtime.gcBgMarkWorker", exact, frameGC},
	{"runtime.gcDrain", exact, frameGC},
	{"runtime.gcDrainN", exact, frameGC},
	{"runtime.gcDrainMarkWorkerDedicated", exact, frameGC},
	{"runtime.gcDrainMarkWorkerFractional", exact, frameGC},
	{"runtime.gcDrainMarkWorkerIdle", exact, frameGC},
	{"runtime.markroot", exact, frameGC},
	{"runtime.scanobject", exact, frameGC},
	{"runtime.scanblock", exact, frameGC},
	{"runtime.scanstack", exact, frameGC},
	{"runtime.gcAssistAlloc", exact, frameGC},
	{"runtime.gcAssistAlloc1", exact, frameGC},
	{"runtime.gcMarkDone", exact, frameGC},
	{"runtime.gcMarkTermination", exact, frameGC},
	{"runtime.gcStart", exact, frameGC | frameGCWait},
	{"runtime.bgsweep", exact, frameGC},
	{"runtime.sweepone", exact, frameGC},
	{"runtime.bgscavenge", exact, frameGC},
	{"runtime.gcSweep", exact, frameGC},
	{"runtime.gcParkAssist", exact, frameGCWait},
	{"runtime.stopTheWorld", exact, frameGCWait},
	{"runtime.stopTheWorldWithSema", exact, frameGCWait},
	{"runtime.GC", exact, frameGCWait},

	// Heap allocation (GC assists started by an allocation count as both).
	{"runtime.mallocgc", prefix, frameAlloc},
	{"runtime.newobject", exact, frameAlloc},
	{"runtime.newarray", exact, frameAlloc},
	{"runtime.makeslice", exact, frameAlloc},
	{"runtime.growslice", exact, frameAlloc},
	{"runtime.makemap", exact, frameAlloc},
	{"runtime.makemap_small", exact, frameAlloc},
	{"runtime.makechan", exact, frameAlloc},
	{"runtime.rawstring", exact, frameAlloc},
	{"runtime.rawbyteslice", exact, frameAlloc},
	{"runtime.rawruneslice", exact, frameAlloc},

	// A server's own frames above its handlers.
	{"net/http.(*conn).serve", prefix, frameServing},
	{"net/http.serverHandler.ServeHTTP", prefix, frameServing},
	{"net/http.HandlerFunc.ServeHTTP", prefix, frameServing},
	{"net/http.(*ServeMux).ServeHTTP", prefix, frameServing},

	// Goroutines of servers, profilers and the runtime that serve no request: accept loops,
	// connection readers, signal handling, and the profiler's and the scraper's own requests.
	{"net.(*TCPListener).Accept", prefix, frameIdle},
	{"net.(*UnixListener).Accept", prefix, frameIdle},
	{"net/http.(*connReader).backgroundRead", prefix, frameIdle},
	{"runtime/pprof.", prefix, frameIdle},
	{"net/http/pprof.", prefix, frameIdle},
	{"os/signal.", prefix, frameIdle},
	{"runtime.ensureSigM", prefix, frameIdle},
	{"github.com/valyala/fasthttp.(*workerPool)", prefix, frameIdle},
	{"github.com/valyala/fasthttp.(*Server).Serve", prefix, frameIdle},
	{"github.com/prometheus/client_golang/prometheus/promhttp.", prefix, frameIdle},
	{"github.com/valyala/fasthttp/pprofhandler.", prefix, frameIdle},
	{"expvar.", prefix, frameIdle},

	// The race detector's runtime (a -race build) and asynchronous preemption.
	{"racecall", prefix, frameNobody},
	{"__tsan", prefix, frameNobody},
	{"_ZN6__tsan", prefix, frameNobody},
	{"__sanitizer", prefix, frameNobody},
	{"runtime.race", prefix, frameNobody},
	{"runtime.asyncPreempt", prefix, frameNobody},

	// Reads of a network connection.
	{"net.(*netFD).Read", exact, frameRead},
	{"net.(*conn).Read", exact, frameRead},
	{"crypto/tls.(*Conn).Read", exact, frameRead},
	{"net.(*TCPConn).Read", exact, frameRead},
	{"net.(*UnixConn).Read", exact, frameRead},
}

// frameIndex is frames by exact name, and its prefixes by class.
var frameIndex = func() (x struct {
	exact    map[string]frameClass
	prefixes [numFrameClasses][]string
}) {
	x.exact = map[string]frameClass{}
	for _, f := range frames {
		if !f.prefix {
			x.exact[f.name] |= f.class
			continue
		}
		for c := f.class; c != 0; c &= c - 1 {
			i := bits.TrailingZeros16(uint16(c))
			x.prefixes[i] = append(x.prefixes[i], f.name)
		}
	}
	return x
}()

// frameIs reports whether the function fn is a frame of class c (one class).
func frameIs(fn string, c frameClass) bool {
	if frameIndex.exact[fn]&c != 0 {
		return true
	}
	for _, p := range frameIndex.prefixes[bits.TrailingZeros16(uint16(c))] {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
}
