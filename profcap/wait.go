package profcap

import (
	"cmp"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
)

// DefaultWaitSites is how many wait sites Analyze keeps.
const DefaultWaitSites = 10

// Waits is where the goroutines of a goroutine profile were parked: the first frame
// outside the runtime (the primitive they block in, e.g. sync.(*Mutex).Lock) and the
// first frame outside the standard library that led there (the code that asked).
type Waits struct {
	// Total counts every goroutine; Idle the server's own plumbing (accept loops, idle
	// keep-alive connections, the profiler answering), which Sites leave out.
	Total int64      `json:"total"`
	Idle  int64      `json:"idle"`
	Sites []WaitSite `json:"sites,omitempty"`
}

// WaitSite is one place goroutines were parked, or running (Reason "running").
type WaitSite struct {
	Function string `json:"function"`         // first frame outside the runtime
	Caller   string `json:"caller,omitempty"` // first frame outside the standard library, if not Function
	Reason   string `json:"reason"`           // mutex, cond, channel, select, semaphore, I/O, sleep, running
	Count    int64  `json:"count"`
}

// Site is the wait site in words, e.g. "sync.(*Mutex).Lock from main.handler".
func (w WaitSite) Site() string {
	if w.Caller == "" {
		return w.Function
	}
	return w.Function + " from " + w.Caller
}

// idleFrames mark goroutines of the server's plumbing rather than of requests being served.
var idleFrames = []string{
	"net/http.(*conn).readRequest", "net/http.(*connReader).backgroundRead", "net.(*TCPListener).Accept",
	"net.(*UnixListener).Accept", "net/http.(*persistConn).readLoop", "net/http.(*persistConn).writeLoop",
	"runtime/pprof.", "net/http/pprof.", "os/signal.", "runtime.ensureSigM", "net/http.(*http2serverConn).serve",
	"main.main", // the main goroutine of a server waits for it to end
}

// WaitSites groups the goroutines of a goroutine profile by wait site, most first, and keeps n (n <= 0: DefaultWaitSites).
func WaitSites(p *profile.Profile, n int) Waits {
	if n <= 0 {
		n = DefaultWaitSites
	}
	var w Waits
	counts := map[WaitSite]int64{}
	var buf []string
	for _, s := range p.Sample {
		if len(s.Value) == 0 {
			continue
		}
		v := s.Value[0]
		w.Total += v
		buf = stack(s, buf)
		if slices.ContainsFunc(buf, isIdleFrame) {
			w.Idle += v
			continue
		}
		site := waitSite(buf)
		if site.Function == "" {
			w.Idle += v // no frame to name
			continue
		}
		counts[site] += v
	}
	for site, c := range counts {
		site.Count = c
		w.Sites = append(w.Sites, site)
	}
	slices.SortFunc(w.Sites, func(a, b WaitSite) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return strings.Compare(a.Site(), b.Site())
	})
	w.Sites = w.Sites[:min(n, len(w.Sites))]
	return w
}

func isIdleFrame(name string) bool {
	for _, f := range idleFrames {
		if strings.HasPrefix(name, f) {
			return true
		}
	}
	return false
}

// waitSite names where a stack (leaf first) is parked and why.
func waitSite(stk []string) WaitSite {
	site := WaitSite{Reason: "running"}
	i := 0
	best := len(reasons)
	for ; i < len(stk) && isRuntimeFrame(stk[i]); i++ {
		if r := slices.Index(reasons, waitReason(stk[i])); r >= 0 && r < best {
			best = r
			site.Reason = reasons[r]
		}
	}
	if i == len(stk) {
		if len(stk) > 0 {
			site.Function = stk[len(stk)-1]
		}
		return site
	}
	site.Function = stk[i]
	if site.Function == "time.Sleep" {
		site.Reason = "sleep"
	}
	if !isStd(site.Function) {
		return site
	}
	for _, f := range stk[i+1:] {
		if !isStd(f) {
			site.Caller = f
			break
		}
	}
	return site
}

// isRuntimeFrame: frames of the runtime and the internals of blocking primitives.
func isRuntimeFrame(name string) bool {
	for _, p := range []string{"runtime.", "internal/", "sync.runtime_", "syscall.", "sync.(*Mutex).lockSlow", "sync.(*RWMutex).rUnlockSlow"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// reasons are the wait reasons, most specific first (a mutex waits on a semaphore).
var reasons = []string{"mutex", "cond", "channel", "select", "I/O", "semaphore"}

func waitReason(frame string) string {
	switch {
	case strings.Contains(frame, "SemacquireMutex"), strings.Contains(frame, "SemacquireRWMutex"), strings.Contains(frame, "lockSlow"):
		return "mutex"
	case strings.Contains(frame, "notifyListWait"):
		return "cond"
	case strings.HasPrefix(frame, "runtime.selectgo"):
		return "select"
	case strings.HasPrefix(frame, "runtime.chanrecv"), strings.HasPrefix(frame, "runtime.chansend"):
		return "channel"
	case strings.HasPrefix(frame, "runtime.semacquire"), strings.Contains(frame, "Semacquire"):
		return "semaphore"
	case strings.HasPrefix(frame, "internal/poll."), strings.HasPrefix(frame, "runtime.netpoll"):
		return "I/O"
	}
	return ""
}

// isStd reports whether a function belongs to the standard library: its package path's
// first element has no dot, and it is not package main.
func isStd(fn string) bool {
	if strings.HasPrefix(fn, "main.") {
		return false
	}
	first, _, found := strings.Cut(fn, "/")
	return !found || !strings.Contains(first, ".")
}
