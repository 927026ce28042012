package profcap

import (
	"cmp"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
)

// DefaultWaitSites is how many wait sites Analyze keeps.
const DefaultWaitSites = 10

// Waits is where the goroutines of a goroutine profile were parked. A goroutine is a
// request goroutine when its stack runs a request's handler below the server's connection
// loop (net/http's (*conn).serve through serverHandler.ServeHTTP, its HTTP/2 runHandler,
// or a handler called by fasthttp's serveConn); the others are the server's idle
// connections and accept loops, and background goroutines (libraries' own, such as
// database/sql's connectionOpener, or the program's). Sites names where the request
// goroutines were: a library's pool by what it is ("database/sql: waiting for a
// connection") or the primitive they block in, with the first frame of the application
// that asked.
type Waits struct {
	// Total counts every goroutine; Idle those not in Sites' population (idle connections,
	// the server's and libraries' plumbing, background goroutines).
	Total int64 `json:"total"`
	Idle  int64 `json:"idle"`
	// Server is the server whose request goroutines were found ("net/http", "fasthttp"),
	// "" when none was: then Sites are every goroutine's but the known plumbing's.
	Server string `json:"server,omitempty"`
	// Requests counts the request goroutines (0 without a server).
	Requests int64      `json:"requests,omitempty"`
	Sites    []WaitSite `json:"sites,omitempty"`
	// Background lists where the goroutines that serve no request were, plumbing left
	// out: a leak shows here.
	Background []WaitSite `json:"background,omitempty"`
}

// WaitSite is one place goroutines were parked, or running (Reason "running").
type WaitSite struct {
	Function string `json:"function"`         // first frame outside the runtime
	Caller   string `json:"caller,omitempty"` // first frame of the application that led there, if not Function
	// What names a library's pool or a primitive in words, e.g. "database/sql: waiting
	// for a connection"; "" when the function says it.
	What string `json:"what,omitempty"`
	// Reason is why: mutex, cond, channel send, channel receive, select, semaphore, I/O,
	// sleep, pool, downstream (reading the answer of a connection the target opened: all
	// parked), or running, GC (allocating or held up by the collector: CPU).
	Reason string `json:"reason"`
	// Port is the port a downstream of What's kind usually listens on (5432 for
	// PostgreSQL), 0 when any; Addr is the downstream's address among the target's
	// outbound connections, when Locate found it.
	Port  uint16 `json:"port,omitempty"`
	Addr  string `json:"addr,omitempty"`
	Count int64  `json:"count"`
}

// Site is the wait site in words, e.g. "database/sql: waiting for a connection (pool at
// SetMaxOpenConns) from main.(*store).user", "a channel receive in main.worker" or
// "encoding/json.Marshal from main.list".
func (w WaitSite) Site() string {
	if w.Addr != "" { // "PostgreSQL (lib/pq) at 127.0.0.1:5432: waiting for its answer"
		kind, rest, _ := strings.Cut(w.What, ": ")
		w.What = kind + " at " + w.Addr + ": " + rest
	}
	switch {
	case w.What == "" && w.Caller == "":
		return w.Function
	case w.What == "":
		return w.Function + " from " + w.Caller
	case w.Caller != "":
		return w.What + " from " + w.Caller
	case isStd(w.Function):
		return w.What
	}
	return w.What + " in " + w.Function
}

// WaitSites groups the goroutines of a goroutine profile by wait site, most first, and
// keeps n (n <= 0: DefaultWaitSites) of the request goroutines' and of the background's.
func WaitSites(p *profile.Profile, n int) Waits {
	if n <= 0 {
		n = DefaultWaitSites
	}
	var w Waits
	requests, background := map[WaitSite]int64{}, map[WaitSite]int64{}
	var buf []string
	for _, s := range p.Sample {
		if len(s.Value) == 0 {
			continue
		}
		v := s.Value[0]
		w.Total += v
		buf = stack(s, buf)
		kind, server, root := requestPath(buf)
		switch kind {
		case pathRequest:
			w.Server = server
			w.Requests += v
			requests[nameSite(buf, root)] += v
		case pathIdle:
			w.Server = cmp.Or(w.Server, server)
		case pathBackground:
			if srv := serverLoop(buf); srv != "" {
				w.Server = cmp.Or(w.Server, srv)
			}
			if !slices.ContainsFunc(buf, isPlumbing) {
				if site := nameSite(buf, len(buf)); site.Function != "" {
					background[site] += v
				}
			}
		}
	}
	w.Background = sortSites(background, n)
	if w.Server != "" { // a server between requests, or serving some: only requests are sites
		w.Sites = sortSites(requests, n)
		w.Idle = w.Total - w.Requests
		return w
	}
	// No server seen (a gRPC or custom server, or none): every goroutine but plumbing.
	w.Sites = w.Background
	w.Idle = w.Total
	for _, s := range background {
		w.Idle -= s
	}
	return w
}

func sortSites(m map[WaitSite]int64, n int) []WaitSite {
	var out []WaitSite
	for site, c := range m {
		site.Count = c
		out = append(out, site)
	}
	slices.SortFunc(out, func(a, b WaitSite) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return strings.Compare(a.Site(), b.Site())
	})
	return out[:min(n, len(out))]
}

// isPlumbing: a goroutine of a server, a profiler or the runtime that is never a
// request's nor a leak's (frames.go).
func isPlumbing(name string) bool { return frameIs(name, frameIdle) }

// Kinds of goroutine by their place in the request path.
const (
	pathBackground = iota // not under a server's connection loop
	pathIdle              // a server's connection between requests, or its own plumbing
	pathRequest           // running a request's handler
)

// serverLoop is the server whose accept loop a stack is in, "" for none.
func serverLoop(stk []string) string {
	for _, f := range stk {
		switch {
		case strings.HasPrefix(f, "net/http.(*Server).Serve"):
			return "net/http"
		case strings.HasPrefix(f, "github.com/valyala/fasthttp.(*Server).Serve"):
			return "fasthttp"
		}
	}
	return ""
}

// requestPath places a stack (leaf first): running a request's handler below a server's
// connection loop (a request), a server's connection between requests (idle), or
// elsewhere (background). For a request it returns the server and the index of the
// server's frame that called the application (net/http.serverHandler.ServeHTTP, which
// HTTP/1 and the bundled HTTP/2 both go through; x/net/http2's runHandler; fasthttp's
// serveConn when what it called is not fasthttp's own reading or writing).
func requestPath(stk []string) (kind int, server string, root int) {
	idle := false
	for i := len(stk) - 1; i >= 0; i-- {
		switch f := stk[i]; f {
		case "net/http.serverHandler.ServeHTTP", "golang.org/x/net/http2.(*serverConn).runHandler":
			if slices.ContainsFunc(stk[:i], isPlumbing) {
				return pathIdle, "net/http", 0 // the profiler's or the metrics' own request
			}
			return pathRequest, "net/http", i
		case "net/http.(*conn).serve":
			idle = true
			server = "net/http"
		case "github.com/valyala/fasthttp.(*Server).serveConn":
			if i > 0 && !strings.HasPrefix(stk[i-1], "github.com/valyala/fasthttp.") && !isStd(stk[i-1]) &&
				!slices.ContainsFunc(stk[:i], isPlumbing) {
				return pathRequest, "fasthttp", i
			}
			return pathIdle, "fasthttp", 0
		}
	}
	if idle {
		return pathIdle, server, 0
	}
	return pathBackground, "", 0
}

// nameSite names where a stack (leaf first) is parked and why: a library pool or the
// primitive, and the application frame that asked, looked for below root (the handler's
// entry; len(stk) for a goroutine outside the request path).
func nameSite(stk []string, root int) WaitSite { return nameWait(stk, root, "running") }

// nameWait is nameSite for a stack whose reason is unknown unless its runtime frames say:
// "running" in a goroutine profile, "blocked" in a block or mutex profile (whose stacks
// start at the blocking call, without the runtime's frames).
func nameWait(stk []string, root int, unknown string) WaitSite {
	site := WaitSite{Reason: unknown}
	i := 0
	best := len(reasons)
	gc := false
	for ; i < len(stk) && isRuntime(stk[i]); i++ {
		if r := slices.Index(reasons, waitReason(stk[i])); r >= 0 && r < best {
			best = r
			site.Reason = reasons[r]
		}
		gc = gc || isGC(stk[i]) || isAlloc(stk[i]) || frameIs(stk[i], frameGCWait)
	}
	if gc {
		// Allocating, or held up by the collector (an assist, a GC start): CPU work, not a
		// resource, whatever the runtime parked on.
		site.Reason = "GC"
	}
	if i == len(stk) {
		if len(stk) > 0 {
			site.Function = stk[len(stk)-1]
		}
		return site
	}
	site.Function = stk[i]
	// The outermost frame of the primitive names it: an RWMutex's writers wait in the
	// sync.Mutex inside it, errgroup's Wait in a WaitGroup's.
	for i+1 < len(stk) && strings.HasPrefix(stk[i], "sync.") && (strings.HasPrefix(stk[i+1], "sync.") ||
		stk[i+1] == "golang.org/x/sync/errgroup.(*Group).Wait") {
		i++
		site.Function = stk[i]
	}
	if site.Function == "time.Sleep" {
		site.Reason = "sleep"
	}
	if site.Reason == "running" || site.Reason == "GC" {
		// On a CPU, or wanting it: name where, and whose code it is.
		site.Caller = appFrame(stk, i, root, site.Function)
		return site
	}
	// A known pool further out (pgxpool around a semaphore) names the wait.
	parkedHere := parked(site.Reason)
	for k := i + 1; parkedHere && k < min(root, len(stk)) && !strings.HasPrefix(stk[k], "main."); k++ {
		if what, ok := knownPool(stk[k]); ok {
			i, site.Function, site.What, site.Reason = k, stk[k], what, "pool"
		}
	}
	if site.Reason == "I/O" {
		// Reading a connection the target opened: waiting for that downstream's answer.
		if what, port, _, ok := downstreamWait(stk, i, root); ok {
			site.What, site.Reason, site.Port = what, "downstream", port
		}
	}
	if site.Reason != "pool" && site.Reason != "downstream" {
		if what, ok := poolWait(site.Function, site.Reason); ok {
			site.What, site.Reason = what, "pool"
		} else {
			site.What = primitive(site.Function, site.Reason)
		}
	}
	if site.Function == "net/http.(*persistConn).roundTrip" {
		site.Reason = "downstream" // http.Transport's wait for the answer: a downstream's
	}
	site.Caller = appFrame(stk, i, root, site.Function)
	// Whose lock: a library's (a logger's, around its writes), named by its module when
	// that is not the code that asked.
	if strings.HasPrefix(site.Function, "sync.") && site.What != "" && i+1 < min(root, len(stk)) {
		if m := module(stk[i+1]); m != "std" && m != "main" && m != module(site.Caller) {
			kind, rest, _ := strings.Cut(site.What, ": ")
			site.What = kind + " of " + m + ": " + rest
		}
	}
	return site
}

// isRuntime: frames of the runtime and the internals of blocking primitives (frames.go).
func isRuntime(name string) bool { return frameIs(name, frameRuntime) }

// reasons are the wait reasons, most specific first (a mutex waits on a semaphore).
var reasons = []string{"mutex", "cond", "channel send", "channel receive", "select", "I/O", "semaphore"}

func waitReason(frame string) string {
	switch {
	case strings.Contains(frame, "SemacquireMutex"), strings.Contains(frame, "SemacquireRWMutex"), strings.Contains(frame, "lockSlow"):
		return "mutex"
	case strings.Contains(frame, "notifyListWait"):
		return "cond"
	case strings.HasPrefix(frame, "runtime.selectgo"):
		return "select"
	case strings.HasPrefix(frame, "runtime.chansend"):
		return "channel send"
	case strings.HasPrefix(frame, "runtime.chanrecv"):
		return "channel receive"
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
