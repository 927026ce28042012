package profcap

import (
	"context"
	"crypto/sha256"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

//go:noinline
func apiperfTestDigest(b []byte) [32]byte {
	sum := sha256.Sum256(b)
	for range 50000 {
		sum = sha256.Sum256(sum[:])
	}
	return sum
}

// A real service whose handler burns CPU hashing, behind a logging middleware and the
// mux: the hot spot is sha256's block function, the path starts at the handler (not the
// middleware or the mux), and the middleware is among the wrappers.
func TestHotRealProfile(t *testing.T) {
	logging := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r)
		})
	}
	mux := http.NewServeMux()
	mux.Handle("/hash", logging(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sum := apiperfTestDigest([]byte(r.URL.Path))
		w.Write(sum[:4])
	})))
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/hash", nil)
				if resp, err := http.DefaultClient.Do(req); err == nil {
					resp.Body.Close()
				}
			}
		})
	}
	resp, err := http.Get(srv.URL + "/debug/pprof/profile?seconds=1")
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(resp.Body)
	resp.Body.Close()
	cancel()
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	h, err := Hot(p, "cpu", 5)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("functions %v\npackages %v\npath %s\nwrappers %v", h.Functions, h.Packages, h.PathString(), h.Wrappers)
	// pprof's pseudo-frames (runtime._System: samples not unwound) and the race detector's
	// instrumented copies (runtime.slicecopy) are large in a -race build; the hottest function
	// is the first one outside the runtime.
	top := ""
	for _, f := range h.Functions {
		if !strings.HasPrefix(f.Name, "runtime.") {
			top = f.Name
			break
		}
	}
	if !strings.Contains(top, "sha256") {
		t.Fatalf("hottest function %v, want sha256's", h.Functions)
	}
	if !strings.Contains(h.Packages[0].Name, "sha256") && !strings.Contains(h.Packages[1].Name, "sha256") {
		t.Errorf("hottest packages %v, want sha256's among the first two", h.Packages)
	}
	const handler = "github.com/apiperf/apiperf/profcap.TestHotRealProfile.func"
	if len(h.Path) < 3 || !strings.HasPrefix(h.Path[0], handler) || !strings.Contains(strings.Join(h.Path, " "), "apiperfTestDigest") ||
		!strings.Contains(strings.Join(h.Path[2:], " "), "sha256") {
		t.Errorf("path %q, want the handler closure, apiperfTestDigest, down into sha256 (%s)", h.Path, top)
	}
	mw := false
	for _, w := range h.Wrappers {
		mw = mw || w == "net/http.(*ServeMux).ServeHTTP"
	}
	if !mw || strings.Contains(h.Path[0], "ServeMux") {
		t.Errorf("wrappers %v, want net/http.(*ServeMux).ServeHTTP among them and not on the path", h.Wrappers)
	}
}

// synthProfile builds a CPU profile of stacks (leaf first) with the given sample values.
func synthProfile(stacks [][]string, values []int64) *profile.Profile {
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "cpu", Unit: "nanoseconds"}}}
	fns := map[string]*profile.Location{}
	for i, stk := range stacks {
		s := &profile.Sample{Value: []int64{values[i]}}
		for _, name := range stk {
			loc := fns[name]
			if loc == nil {
				f := &profile.Function{ID: uint64(len(fns) + 1), Name: name}
				loc = &profile.Location{ID: uint64(len(fns) + 1), Line: []profile.Line{{Function: f}}}
				fns[name] = loc
				p.Function = append(p.Function, f)
				p.Location = append(p.Location, loc)
			}
			s.Location = append(s.Location, loc)
		}
		p.Sample = append(p.Sample, s)
	}
	return p
}

// Work a handler fans out to errgroup's goroutines is not below the server: its path runs
// from the application's first frame in those goroutines, not from an unrelated request
// path; a gin handler's path starts after gin's frames and the user's middleware.
func TestHotPathsOutsideTheHandler(t *testing.T) {
	server := []string{"net/http.serverHandler.ServeHTTP", "net/http.(*conn).serve"}
	gin := append([]string{"main.(*api).list", "github.com/gin-gonic/gin.(*Context).Next", "main.logger.func1",
		"github.com/gin-gonic/gin.(*Context).Next", "github.com/gin-gonic/gin.(*Engine).handleHTTPRequest",
		"github.com/gin-gonic/gin.(*Engine).ServeHTTP"}, server...)
	p := synthProfile([][]string{
		{"crypto/internal/fips140/sha256.blockSHANI", "crypto/sha256.Sum256", "main.(*reports).checksum", "main.(*reports).get.func1",
			"golang.org/x/sync/errgroup.(*Group).Go.func1"},
		append([]string{"encoding/json.appendString", "encoding/json.Marshal"}, gin...),
		append([]string{"runtime.memmove"}, gin...),
		{"runtime.scanobject", "runtime.gcDrain", "runtime.gcBgMarkWorker"},
	}, []int64{60, 25, 5, 10})
	h, err := Hot(p, "cpu", 5)
	if err != nil {
		t.Fatal(err)
	}
	if got := h.PathString(); got != "main.(*reports).get.func1 -> main.(*reports).checksum -> crypto/sha256.Sum256 -> crypto/internal/fips140/sha256.blockSHANI" {
		t.Errorf("path = %q, want it from the errgroup goroutine's first main frame to sha256", got)
	}
	// Without the fan-out, the hottest is JSON under gin: the path starts at the handler.
	p = synthProfile([][]string{append([]string{"encoding/json.appendString", "encoding/json.Marshal"}, gin...), append([]string{"runtime.memmove"}, gin...)}, []int64{25, 5})
	h, _ = Hot(p, "cpu", 5)
	if got := h.PathString(); got != "main.(*api).list -> encoding/json.Marshal -> encoding/json.appendString" {
		t.Errorf("gin path = %q, want it from main.(*api).list", got)
	}
	if !strings.Contains(strings.Join(h.Wrappers, " "), "main.logger.func1") {
		t.Errorf("wrappers %v, want the user's middleware main.logger.func1 among them", h.Wrappers)
	}
}

// The place a person would change: the application frame nearest the leaf with the largest
// share, and the library it spends it in, never a runtime helper; the net/http-style
// middleware of gorilla/mux (the user's HandlerFunc wrappers) are wrappers, not the place.
func TestHotPlace(t *testing.T) {
	server := []string{"net/http.serverHandler.ServeHTTP", "net/http.(*conn).serve"}
	chain := append([]string{"main.(*api).check", "net/http.HandlerFunc.ServeHTTP", "main.auth.func1",
		"net/http.HandlerFunc.ServeHTTP", "main.logging.func1", "github.com/gorilla/mux.(*Router).ServeHTTP"}, server...)
	under := func(fs ...string) []string { return append(fs, chain...) }
	p := synthProfile([][]string{
		// regexp compiled per request under main.rules: runtime helpers hold the most self time.
		under("runtime.memclrNoHeapPointers", "runtime.mallocgc", "regexp/syntax.(*compiler).inst", "regexp.compile", "regexp.MustCompile", "main.rules"),
		under("regexp/syntax.(*parser).push", "regexp/syntax.Parse", "regexp.compile", "regexp.MustCompile", "main.rules"),
		under("runtime.futex", "runtime.mallocgc", "regexp.MustCompile", "main.rules"),
		// the handler's own encoding, and its own code
		under("encoding/json.appendString", "encoding/json.Marshal"),
		under("runtime.memmove"),
		{"runtime.scanobject", "runtime.gcDrain", "runtime.gcBgMarkWorker"},
	}, []int64{30, 15, 10, 20, 5, 20})
	h, err := Hot(p, "cpu", 5)
	if err != nil {
		t.Fatal(err)
	}
	if h.Place == nil {
		t.Fatalf("no place (functions %v)", h.Functions)
	}
	want := Place{Frame: "main.rules", Pct: 55, Library: "regexp", Entry: "regexp.MustCompile", LibraryPct: 55}
	if *h.Place != want {
		t.Errorf("place = %+v, want %+v", *h.Place, want)
	}
	if got := h.Place.String(); got != "main.rules (55%), in regexp (regexp.MustCompile)" {
		t.Errorf("place in words = %q", got)
	}
	ws := strings.Join(h.Wrappers, " ")
	for _, w := range []string{"main.logging.func1", "main.auth.func1", "net/http.HandlerFunc.ServeHTTP"} {
		if !strings.Contains(ws, w) {
			t.Errorf("wrappers %v, want %s among them", h.Wrappers, w)
		}
	}
	if len(h.Path) == 0 || h.Path[0] != "main.(*api).check" {
		t.Errorf("path %q, want it from the handler main.(*api).check", h.Path)
	}
	// A gin handler encoding JSON through c.JSON: the library is encoding/json, not gin's render.
	gin := append([]string{"main.(*shop).orders", "github.com/gin-gonic/gin.(*Context).Next",
		"github.com/gin-gonic/gin.(*Engine).handleHTTPRequest", "github.com/gin-gonic/gin.(*Engine).ServeHTTP"}, server...)
	p = synthProfile([][]string{
		append([]string{"bytes.(*Buffer).WriteString", "encoding/json.(*Encoder).Encode", "github.com/gin-gonic/gin/render.WriteJSON",
			"github.com/gin-gonic/gin/render.JSON.Render", "github.com/gin-gonic/gin.(*Context).Render", "github.com/gin-gonic/gin.(*Context).JSON"}, gin...),
		append([]string{"runtime.mallocgc"}, gin...),
	}, []int64{70, 30})
	h, _ = Hot(p, "cpu", 5)
	if h.Place == nil || h.Place.Frame != "main.(*shop).orders" || h.Place.Library != "encoding/json" || h.Place.Entry != "encoding/json.(*Encoder).Encode" {
		t.Errorf("gin place = %+v, want main.(*shop).orders in encoding/json", h.Place)
	}
	// An echo handler whose c.JSON is on every request (echo's frames on the wrappers' side
	// of the handler): the place is still the handler, in encoding/json.
	echo := append([]string{"main.(*orderAPI).list", "github.com/labstack/echo/v4.(*Echo).ServeHTTP.func1",
		"github.com/labstack/echo/v4.(*Echo).ServeHTTP"}, server...)
	p = synthProfile([][]string{
		append([]string{"encoding/json.structEncoder.encode", "encoding/json.(*Encoder).Encode", "github.com/labstack/echo/v4.DefaultJSONSerializer.Serialize",
			"github.com/labstack/echo/v4.(*context).json", "github.com/labstack/echo/v4.(*context).JSON"}, echo...),
		append([]string{"bytes.(*Buffer).WriteString", "encoding/json.(*Encoder).Encode", "github.com/labstack/echo/v4.DefaultJSONSerializer.Serialize",
			"github.com/labstack/echo/v4.(*context).json", "github.com/labstack/echo/v4.(*context).JSON"}, echo...),
	}, []int64{60, 40})
	h, _ = Hot(p, "cpu", 5)
	if h.Place == nil || h.Place.Frame != "main.(*orderAPI).list" || h.Place.Library != "encoding/json" {
		t.Errorf("echo place = %+v, want main.(*orderAPI).list in encoding/json", h.Place)
	}
	// Allocation in the handler's own code (the runtime's allocator below it): no library.
	p = synthProfile([][]string{under("runtime.mallocgc", "runtime.newobject", "main.buildFeed")}, []int64{10})
	h, _ = Hot(p, "cpu", 5)
	if h.Place == nil || h.Place.Frame != "main.buildFeed" || h.Place.Library != "" {
		t.Errorf("allocating place = %+v, want main.buildFeed with no library", h.Place)
	}
}
