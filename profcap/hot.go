package profcap

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
)

// DefaultHotRows is how many functions and packages HotSpots keeps.
const DefaultHotRows = 10

// wrapperCum: the wrappers are the frames every request passes through, on at least this
// share of the requests' CPU samples, from the server down to the last frame of the router
// (the module the server called: gin, chi, echo, fiber, or net/http's own mux) among them:
// router dispatch, the middleware chain, recovery and logging wrappers, the user's
// middleware included. The handler is the first frame after them.
const wrapperCum = 0.9

// HotSpots is where a CPU profile's time goes, without the frames every request passes
// through: self time by function and by package, and the path from the request's
// handler to the hottest function.
type HotSpots struct {
	Functions []Share `json:"functions,omitempty"`
	Packages  []Share `json:"packages,omitempty"`
	// Path is the commonest stack down to the hottest function that has one, root first:
	// from the handler (below the server and the wrappers) when requests run it, else from
	// the first application frame of the goroutine that does (errgroup's, a worker's).
	Path []string `json:"path,omitempty"`
	// Wrappers are the frames left out of Path: on nearly every request, with no time of
	// their own.
	Wrappers []string `json:"wrappers,omitempty"`
	// Place is where a person would change the code: the application frame with the
	// largest share below it, and the library it spends that share in; nil when no
	// application frame holds any.
	Place *Place `json:"place,omitempty"`
}

// Place is an application frame and what its share of a profile is spent in.
type Place struct {
	// Frame is the application's function nearest the leaf (the one that called into a
	// library or the runtime), Pct the share of the profile below it, in percent.
	Frame string  `json:"frame"`
	Pct   float64 `json:"pct"`
	// Library is the package most of Frame's share is spent in below it (e.g. "regexp",
	// "encoding/json"), Entry the library's function Frame called (regexp.MustCompile), and
	// LibraryPct that share of the profile; "" when Frame spends it in its own code or the
	// runtime's (allocation, its own loops).
	Library    string  `json:"library,omitempty"`
	Entry      string  `json:"entry,omitempty"`
	LibraryPct float64 `json:"library_pct,omitempty"`
}

// String is the place in words: "main.rules (52%), in regexp (regexp.MustCompile)".
func (p Place) String() string {
	s := fmt.Sprintf("%s (%.0f%%)", p.Frame, p.Pct)
	if p.Library != "" {
		s += fmt.Sprintf(", in %s (%s)", p.Library, p.Entry)
	}
	return s
}

// Share is a function's or package's part of a profile, in percent.
type Share struct {
	Name string  `json:"name"`
	Pct  float64 `json:"pct"`
}

// Hot computes the hot spots of sample type typ ("" for the default) of a CPU profile,
// keeping n rows (n <= 0: DefaultHotRows).
func Hot(p *profile.Profile, typ string, n int) (HotSpots, error) {
	if n <= 0 {
		n = DefaultHotRows
	}
	idx, err := sampleIndex(p, typ)
	if err != nil {
		return HotSpots{}, err
	}
	var total, reqTotal int64
	flat, pkgs, cum := map[string]int64{}, map[string]int64{}, map[string]int64{}
	type req struct {
		stk    []string // leaf first, down to the server's frame (excluded)
		v      int64
		router string // the module the server called
		bg     bool   // not a request's: work a handler handed to other goroutines, or the program's own
	}
	var reqs []req
	var buf []string
	seen := map[string]bool{}
	for _, s := range p.Sample {
		if idx >= len(s.Value) || s.Value[idx] == 0 {
			continue
		}
		v := s.Value[idx]
		buf = stack(s, buf)
		// The race detector's runtime (a -race build) works for the function that called
		// it (alone on a stack it is nobody's), and an asynchronous preemption landed in it.
		for len(buf) > 0 && frameIs(buf[0], frameNobody) {
			buf = buf[1:]
		}
		if len(buf) == 0 {
			continue
		}
		total += v
		flat[buf[0]] += v
		pkgs[pkgPath(buf[0])] += v
		if kind, _, root := requestPath(buf); kind == pathRequest {
			reqTotal += v
			clear(seen)
			for _, f := range buf[:root] {
				if !seen[f] {
					seen[f] = true
					cum[f] += v
				}
			}
			r := req{stk: slices.Clone(buf[:root]), v: v}
			if root > 0 {
				r.router = module(buf[root-1])
			}
			reqs = append(reqs, r)
		} else if kind == pathBackground {
			reqs = append(reqs, req{stk: slices.Clone(buf), v: v, bg: true})
		}
	}
	if total == 0 {
		return HotSpots{}, nil
	}
	var h HotSpots
	h.Functions = topShares(flat, total, n)
	h.Packages = topShares(pkgs, total, n)
	common := func(f string) bool { return float64(cum[f]) >= wrapperCum*float64(reqTotal) }
	wrappers := map[string]bool{}
	// handler is where a request's own code starts in r.stk (an index, leaf first).
	handler := func(r req) int {
		if r.bg {
			return appStart(r.stk)
		}
		start := len(r.stk) - 1
		for k := len(r.stk) - 1; k >= 0 && common(r.stk[k]); k-- {
			f := r.stk[k]
			// The router's frames, and net/http's between any router's middleware (a
			// HandlerFunc, a ServeMux), the application's own middleware above them.
			if m := module(f); m == r.router && m != "std" || strings.HasPrefix(f, "net/http.") {
				start = k - 1
			}
		}
		for k := len(r.stk) - 1; k > start; k-- {
			wrappers[r.stk[k]] = true
		}
		return start
	}
	// The commonest path to the hottest function that has one: from the handler for a
	// request's work, from the first application frame for work in other goroutines (a
	// fan-out's, a worker's).
	paths := map[string]map[string]int64{} // leaf -> path -> value
	var places placeSums
	for _, r := range reqs {
		start := handler(r)
		if start < 0 {
			continue
		}
		// The place: the application's frame nearest the leaf on the whole stack, as the
		// router's helpers a handler calls (echo's c.JSON) may be on every request too.
		places.add(r.stk, start, r.v, r.router, r.bg)
		var kept []string
		for k := start; k >= 0; k-- {
			if !isRuntime(r.stk[k]) || k == 0 {
				kept = append(kept, r.stk[k])
			}
		}
		if paths[r.stk[0]] == nil {
			paths[r.stk[0]] = map[string]int64{}
		}
		paths[r.stk[0]][strings.Join(kept, "\x00")] += r.v
	}
	h.Wrappers = slices.Sorted(maps.Keys(wrappers))
	h.Place = places.best(total)
	for _, f := range h.Functions {
		best, bestV := "", int64(0)
		for k, v := range paths[f.Name] {
			if v > bestV || v == bestV && k < best {
				best, bestV = k, v
			}
		}
		if best != "" {
			h.Path = strings.Split(best, "\x00")
			break
		}
	}
	return h, nil
}

// placeSums adds up a profile's values by application frame and, below each, by the
// library entered.
type placeSums struct {
	frames map[string]int64
	libs   map[string]map[[2]string]int64 // frame -> {package, entry} -> value
}

// add counts a stack (leaf first; its handler or first application frame at start) to its
// application frame nearest the leaf, and to the first library frame below it: not the
// runtime's, nor the router's (gin's c.JSON hands the work to encoding/json). The
// application is package main, and a request handler's own module (handlers written as
// methods in the service's packages).
func (s *placeSums) add(stk []string, start int, v int64, router string, bg bool) {
	app := "main"
	if m := module(stk[start]); !bg && m != "std" && m != router {
		app = m
	}
	if bg {
		stk = stk[:start+1]
	}
	a := -1
	for k, f := range stk {
		if m := module(f); m == "main" || m == app {
			a = k
			break
		}
	}
	if a < 0 {
		return
	}
	if s.frames == nil {
		s.frames, s.libs = map[string]int64{}, map[string]map[[2]string]int64{}
	}
	s.frames[stk[a]] += v
	lib := [2]string{}
	for k := a - 1; k >= 0; k-- {
		if f := stk[k]; !isRuntime(f) && (router == "" || router == "std" || module(f) != router) {
			lib = [2]string{pkgPath(f), f}
			break
		}
	}
	if s.libs[stk[a]] == nil {
		s.libs[stk[a]] = map[[2]string]int64{}
	}
	s.libs[stk[a]][lib] += v
}

// best is the application frame with the largest share of total and its library (when a
// library holds most of the frame's share, else none: its own code or the runtime's).
func (s *placeSums) best(total int64) *Place {
	frame, fv := "", int64(0)
	for f, v := range s.frames {
		if v > fv || v == fv && f < frame {
			frame, fv = f, v
		}
	}
	if frame == "" {
		return nil
	}
	p := &Place{Frame: frame, Pct: pct(fv, total)}
	byPkg := map[string]int64{}
	for l, v := range s.libs[frame] {
		if l[0] != "" {
			byPkg[l[0]] += v
		}
	}
	pkg, pv := "", int64(0)
	for k, v := range byPkg {
		if v > pv || v == pv && k < pkg {
			pkg, pv = k, v
		}
	}
	if pkg == "" || 2*pv < fv {
		return p
	}
	entry, ev := "", int64(0)
	for l, v := range s.libs[frame] {
		if l[0] == pkg && (v > ev || v == ev && l[1] < entry) {
			entry, ev = l[1], v
		}
	}
	p.Library, p.Entry, p.LibraryPct = pkg, entry, pct(pv, total)
	return p
}

// appStart is where the application's code starts on a stack outside the request path
// (leaf first): the root-most frame of package main, else the root-most frame outside the
// standard library and the runtime; -1 when it has none (the runtime's GC workers).
func appStart(stk []string) int {
	start := -1
	for k := len(stk) - 1; k >= 0; k-- {
		if strings.HasPrefix(stk[k], "main.") {
			return k
		}
		if start < 0 && !isStd(stk[k]) && !isRuntime(stk[k]) {
			start = k
		}
	}
	return start
}

func topShares(m map[string]int64, total int64, n int) []Share {
	out := make([]Share, 0, len(m))
	for k, v := range m {
		out = append(out, Share{Name: k, Pct: pct(v, total)})
	}
	slices.SortFunc(out, func(a, b Share) int {
		if c := cmp.Compare(b.Pct, a.Pct); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out[:min(n, len(out))]
}

// PathString is the path in words, long paths with their middle elided:
// "main.login -> golang.org/x/crypto/bcrypt.CompareHashAndPassword -> ... -> golang.org/x/crypto/blowfish.encryptBlock".
func (h HotSpots) PathString() string {
	p := h.Path
	if len(p) > 6 {
		p = append(append(slices.Clone(p[:3]), "..."), p[len(p)-2:]...)
	}
	return strings.Join(p, " -> ")
}
