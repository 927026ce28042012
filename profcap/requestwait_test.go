package profcap

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	_ "modernc.org/sqlite"
)

// requestWaitService is a real service on loopback with one bottleneck per path, its
// handlers closures as services write them, and net/http/pprof mounted on its mux: a
// database/sql pool of one connection over a SQLite file, an http.Transport with
// MaxConnsPerHost 1 to a slow downstream, a buffered channel used as a semaphore, and a
// global sync.Mutex held while working.
func requestWaitService(t *testing.T) (*httptest.Server, func()) {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("create table t (v int); insert into t values (1)"); err != nil {
		t.Fatal(err)
	}
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(300 * time.Millisecond)
		io.WriteString(w, "ok")
	}))
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
	sem := make(chan struct{}, 1)
	var mu sync.Mutex
	release := make(chan struct{})
	hold := func(r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/db", func(w http.ResponseWriter, r *http.Request) {
		conn, err := db.Conn(r.Context())
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		defer conn.Close()
		var v int
		conn.QueryRowContext(r.Context(), "select v from t").Scan(&v)
		hold(r)
	})
	mux.HandleFunc("/downstream", func(w http.ResponseWriter, r *http.Request) {
		resp, err := client.Get(down.URL)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
	mux.HandleFunc("/sem", func(w http.ResponseWriter, r *http.Request) {
		sem <- struct{}{}
		hold(r)
		<-sem
	})
	mux.HandleFunc("/lock", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hold(r)
		mu.Unlock()
	})
	srv := httptest.NewServer(mux)
	var once sync.Once
	stop := func() {
		once.Do(func() {
			close(release)
			srv.Close()
			down.Close()
			client.CloseIdleConnections()
			db.Close()
		})
	}
	t.Cleanup(stop)
	return srv, stop
}

// Requests waiting on a pool, a downstream's connection limit, a channel semaphore and a
// lock are named by what they wait for, with the handler that asked; database/sql's
// background goroutine, the idle connections and the profiler's own request are not
// request goroutines.
func TestWaitSitesRequestPath(t *testing.T) {
	srv, stop := requestWaitService(t)
	const per = 6
	paths := []string{"/db", "/downstream", "/sem", "/lock"}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for _, p := range paths {
		for range per {
			wg.Go(func() {
				req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+p, nil)
				if resp, err := http.DefaultClient.Do(req); err == nil {
					resp.Body.Close()
				}
			})
		}
	}
	// Wait until every request is parked where its bottleneck keeps it.
	var w Waits
	for deadline := time.Now().Add(5 * time.Second); ; {
		time.Sleep(100 * time.Millisecond)
		w = WaitSites(fetchGoroutines(t, srv.URL), 20)
		if w.Requests >= int64(len(paths)*per+1) || time.Now().After(deadline) {
			break
		}
	}
	stop()
	cancel()
	wg.Wait()
	for _, s := range w.Sites {
		t.Logf("%3d %-8s %s", s.Count, s.Reason, s.Site())
	}
	// The downstream runs in this process too: its one request is a request goroutine.
	if w.Server != "net/http" || w.Requests != int64(len(paths)*per+1) {
		t.Fatalf("WaitSites: server %q, %d request goroutines; want net/http and %d", w.Server, w.Requests, len(paths)*per+1)
	}
	const closure = "github.com/apiperf/apiperf/profcap.requestWaitService.func"
	want := []struct {
		what   string
		reason string
		count  int64
	}{
		{"database/sql: waiting for a connection", "pool", per - 1},
		{"http.Transport: waiting for a connection to the downstream", "pool", per - 1},
		{"a send on a full channel (or an unbuffered one", "channel send", per - 1},
		{"sync.Mutex: waiting for the lock", "mutex", per - 1},
	}
	for _, wnt := range want {
		found := false
		for _, s := range w.Sites {
			if strings.HasPrefix(s.What, wnt.what) {
				found = true
				if s.Count != wnt.count || s.Reason != wnt.reason || !strings.HasPrefix(s.Caller, closure) && !strings.HasPrefix(s.Function, closure) {
					t.Errorf("site %q: %d %s (function %s, caller %s); want %d %s asked by a closure %s*", s.Site(), s.Count, s.Reason, s.Function, s.Caller, wnt.count, wnt.reason, closure)
				}
			}
		}
		if !found {
			t.Errorf("no site %q among %+v", wnt.what, w.Sites)
		}
	}
	for _, s := range append(w.Sites, w.Background...) {
		if strings.Contains(s.Site(), "pprof") || strings.Contains(s.Site(), "readRequest") {
			t.Errorf("site %q: the profiler's request or an idle connection counted", s.Site())
		}
	}
	for _, s := range w.Sites {
		if strings.Contains(s.Function, "connectionOpener") {
			t.Errorf("database/sql's background goroutine counted as a request: %q", s.Site())
		}
	}
	if !strings.Contains(fmt.Sprint(w.Background), "connectionOpener") {
		t.Errorf("Background = %+v, want database/sql's connectionOpener there", w.Background)
	}
}

// fetchGoroutines reads the service's goroutine profile from its pprof endpoint.
func fetchGoroutines(t *testing.T, base string) *profile.Profile {
	t.Helper()
	resp, err := http.Get(base + "/debug/pprof/goroutine")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p, err := profile.Parse(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Where a request's goroutine is and who asked, on stacks as services have them: a handler
// written as a closure in main behind gin's router and middleware, a fiber handler under
// fasthttp, an idle fasthttp connection, and a goroutine outside any server.
func TestRequestPathShapes(t *testing.T) {
	gin := []string{"runtime.gopark", "runtime.selectgo", "database/sql.(*DB).conn", "database/sql.(*DB).query",
		"database/sql.(*DB).QueryContext.func1", "database/sql.(*DB).retry", "database/sql.(*DB).QueryContext",
		"database/sql.(*DB).QueryRowContext", "main.main.func2", "github.com/gin-gonic/gin.(*Context).Next",
		"github.com/gin-gonic/gin.CustomRecoveryWithWriter.func1", "github.com/gin-gonic/gin.(*Context).Next",
		"github.com/gin-gonic/gin.(*Engine).handleHTTPRequest", "github.com/gin-gonic/gin.(*Engine).ServeHTTP",
		"net/http.serverHandler.ServeHTTP", "net/http.(*conn).serve"}
	kind, server, root := requestPath(gin)
	site := nameSite(gin, root)
	if kind != pathRequest || server != "net/http" || site.Caller != "main.main.func2" || site.Reason != "pool" ||
		!strings.HasPrefix(site.Site(), "database/sql: waiting for a connection") {
		t.Errorf("gin closure in main: kind %d server %q site %+v (%s)", kind, server, site, site.Site())
	}
	redis := []string{"runtime.gopark", "runtime.selectgo", "github.com/redis/go-redis/v9/internal/pool.(*ConnPool).waitTurn",
		"github.com/redis/go-redis/v9/internal/pool.(*ConnPool).Get", "github.com/redis/go-redis/v9.(*baseClient).getConn",
		"github.com/redis/go-redis/v9.(*Client).Process", "github.com/redis/go-redis/v9.cmdable.Get",
		"example.com/svc/store.(*Cache).Get", "example.com/svc/api.(*Handler).item", "github.com/go-chi/chi/v5.(*Mux).routeHTTP",
		"net/http.HandlerFunc.ServeHTTP", "github.com/go-chi/chi/v5.(*Mux).ServeHTTP", "net/http.serverHandler.ServeHTTP", "net/http.(*conn).serve"}
	_, _, root = requestPath(redis)
	if site := nameSite(redis, root); site.Caller != "example.com/svc/store.(*Cache).Get" || !strings.HasPrefix(site.What, "go-redis: waiting") {
		t.Errorf("go-redis under chi: site %+v, want go-redis's pool asked by store.(*Cache).Get", site)
	}
	fiber := []string{"runtime.gopark", "internal/sync.runtime_SemacquireMutex", "internal/sync.(*Mutex).lockSlow",
		"sync.(*Mutex).Lock", "main.(*svc).update", "github.com/gofiber/fiber/v2.(*App).next",
		"github.com/gofiber/fiber/v2.(*App).handler", "github.com/valyala/fasthttp.(*Server).serveConn",
		"github.com/valyala/fasthttp.(*workerPool).workerFunc", "github.com/valyala/fasthttp.(*workerPool).getCh.func1"}
	kind, server, root = requestPath(fiber)
	if site := nameSite(fiber, root); kind != pathRequest || server != "fasthttp" || site.Caller != "main.(*svc).update" || site.Reason != "mutex" {
		t.Errorf("fiber: kind %d server %q site %+v", kind, server, site)
	}
	idle := []string{"runtime.gopark", "runtime.netpollblock", "internal/poll.(*FD).Read", "net.(*netFD).Read", "net.(*conn).Read",
		"bufio.(*Reader).Peek", "github.com/valyala/fasthttp.(*Server).serveConn", "github.com/valyala/fasthttp.(*workerPool).workerFunc"}
	if kind, _, _ := requestPath(idle); kind != pathIdle {
		t.Errorf("fasthttp connection reading its next request: kind %d, want idle", kind)
	}
	// pgxpool around puddle around a semaphore: the outermost pool names the wait.
	pgx := []string{"runtime.gopark", "runtime.selectgo", "golang.org/x/sync/semaphore.(*Weighted).Acquire",
		"github.com/jackc/puddle/v2.(*Pool[go.shape.*uint8]).acquire", "github.com/jackc/puddle/v2.(*Pool[go.shape.*uint8]).Acquire",
		"github.com/jackc/pgx/v5/pgxpool.(*Pool).Acquire", "main.(*store).balance", "net/http.HandlerFunc.ServeHTTP",
		"net/http.(*ServeMux).ServeHTTP", "net/http.serverHandler.ServeHTTP", "net/http.(*conn).serve"}
	_, _, root = requestPath(pgx)
	if site := nameSite(pgx, root); site.Function != "github.com/jackc/pgx/v5/pgxpool.(*Pool).Acquire" || !strings.HasPrefix(site.What, "pgxpool: waiting") || site.Caller != "main.(*store).balance" {
		t.Errorf("pgxpool: site %+v, want pgxpool's Acquire asked by main.(*store).balance", site)
	}
	// go-redis v9.23 parks in its FastSemaphore inside the pool's Get.
	redis923 := []string{"runtime.gopark", "runtime.selectgo", "github.com/redis/go-redis/v9/internal.(*FastSemaphore).Acquire",
		"github.com/redis/go-redis/v9/internal/pool.(*ConnPool).waitTurn", "github.com/redis/go-redis/v9/internal/pool.(*ConnPool).Get",
		"github.com/redis/go-redis/v9.(*baseClient).getConn", "main.main.func3", "github.com/gofiber/fiber/v2.(*App).next",
		"github.com/gofiber/fiber/v2.(*App).handler", "github.com/valyala/fasthttp.(*Server).serveConn"}
	_, _, root = requestPath(redis923)
	if site := nameSite(redis923, root); !strings.HasPrefix(site.What, "go-redis: waiting") || site.Caller != "main.main.func3" {
		t.Errorf("go-redis v9.23: site %+v, want go-redis's pool asked by main.main.func3", site)
	}
	// Allocating and held up by the collector: CPU work, not a wait.
	gc := []string{"runtime.gopark", "runtime.semacquire1", "runtime.gcStart", "runtime.mallocgc", "runtime.newobject", "main.buildFeed",
		"main.main.func1", "net/http.HandlerFunc.ServeHTTP", "net/http.serverHandler.ServeHTTP", "net/http.(*conn).serve"}
	_, _, root = requestPath(gc)
	if site := nameSite(gc, root); site.Reason != "GC" || site.Function != "main.buildFeed" {
		t.Errorf("allocation held up by GC: site %+v, want reason GC in main.buildFeed", site)
	}
	// An RWMutex's writer waits in the sync.Mutex inside it: named by the RWMutex.
	rw := []string{"runtime.gopark", "runtime.semacquire1", "internal/sync.runtime_SemacquireMutex", "internal/sync.(*Mutex).lockSlow",
		"internal/sync.(*Mutex).Lock", "sync.(*Mutex).Lock", "sync.(*RWMutex).Lock", "main.(*priceList).lookup", "net/http.HandlerFunc.ServeHTTP",
		"net/http.serverHandler.ServeHTTP", "net/http.(*conn).serve"}
	_, _, root = requestPath(rw)
	if site := nameSite(rw, root); site.What != "sync.RWMutex: waiting for the write lock" || site.Caller != "main.(*priceList).lookup" {
		t.Errorf("RWMutex writer: site %+v, want the RWMutex's write lock asked by main.(*priceList).lookup", site)
	}
	bg := []string{"runtime.gopark", "runtime.selectgo", "database/sql.(*DB).connectionOpener"}
	if kind, _, _ := requestPath(bg); kind != pathBackground {
		t.Errorf("connectionOpener: kind %d, want background", kind)
	}
}

// A server between requests: its idle connection and accept loop say a server is there, so
// no background goroutine (the program's main, a library's) is taken for a request.
func TestWaitSitesIdleServer(t *testing.T) {
	p := synthProfile([][]string{
		{"runtime.gopark", "runtime.netpollblock", "internal/poll.(*FD).Read", "net.(*netFD).Read", "net.(*conn).Read",
			"net/http.(*connReader).Read", "bufio.(*Reader).fill", "bufio.(*Reader).Peek", "net/http.(*conn).readRequest", "net/http.(*conn).serve"},
		{"runtime.gopark", "runtime.chanrecv1", "main.main.func1"},
		{"runtime.gopark", "runtime.netpollblock", "internal/poll.(*FD).Accept", "net.(*TCPListener).Accept", "net/http.(*Server).Serve", "main.main"},
	}, []int64{3, 1, 1})
	w := WaitSites(p, 5)
	if w.Server != "net/http" || w.Requests != 0 || len(w.Sites) != 0 || w.Idle != 5 {
		t.Errorf("WaitSites of an idle server = %+v, want net/http, no request sites, all 5 idle", w)
	}
	if len(w.Background) != 1 || w.Background[0].Function != "main.main.func1" {
		t.Errorf("Background = %+v, want main.main.func1's channel receive", w.Background)
	}
}

// Response bodies never closed keep their connections' reader and writer goroutines: the
// background sites name them by what they are, with the count that piled up.
func TestWaitSitesUnclosedBodies(t *testing.T) {
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write(make([]byte, 64<<10))
	}))
	defer down.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var bodies []io.Closer
	defer func() {
		for _, b := range bodies {
			b.Close()
		}
	}()
	const n = 20
	for range n {
		resp, err := client.Get(down.URL)
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, resp.Body) // read nothing, close only at the end
	}
	time.Sleep(50 * time.Millisecond)
	w := WaitSites(lookup(t, "goroutine"), 10)
	found := false
	for _, s := range w.Background {
		if strings.Contains(s.Site(), "http.Transport: an open connection's") && s.Count >= n {
			found = true
		}
	}
	if !found {
		t.Errorf("Background = %+v, want an open connection's reader or writer, %d of them", w.Background, n)
	}
}
