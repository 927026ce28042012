package target

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The demo bottlenecks (demo mode, under /demo/): each endpoint has exactly one limit, so the
// verdict can be shown, and tested, to find it and nothing else.
const (
	// CPURounds is how many rounds of arithmetic one /demo/cpu request spins (about 1 ms).
	CPURounds = 4 * HotRounds
	// PoolSize and PoolHold: /demo/pool takes one of PoolSize slots of a mutex-guarded pool
	// and holds it PoolHold (a query on a small connection pool): at most PoolSize/PoolHold req/s.
	PoolSize = 4
	PoolHold = 5 * time.Millisecond
	// DownstreamConns and DownstreamDelay: /demo/downstream calls a downstream HTTP service
	// over at most DownstreamConns connections, each call taking DownstreamDelay.
	DownstreamConns = 4
	DownstreamDelay = 5 * time.Millisecond
	// LeakBytes is what each /demo/leak request leaves behind, with a goroutine that never
	// ends (until the server closes); MaxLeaked caps the goroutines so a demo stays bounded.
	LeakBytes = 16 << 10
	MaxLeaked = 100_000
)

// demoBottlenecks holds the state of the /demo/ endpoints of one server.
type demoBottlenecks struct {
	pool   demoPool
	down   *downstream
	leaked atomic.Int64
	timing timingDemo
	keep   chan struct{} // closed when the server stops: leaked goroutines end then
}

// demoEndpoint is one demo bottleneck: its path and handler.
type demoEndpoint struct {
	path string
	h    http.HandlerFunc
}

// endpoints are the demo bottleneck endpoints, in the order help lists them.
func (d *demoBottlenecks) endpoints() []demoEndpoint {
	return []demoEndpoint{
		{"/demo/cpu", demoCPU},
		{"/demo/pool", d.poolHandler},
		{"/demo/downstream", d.downstreamHandler},
		{"/demo/leak", d.leakHandler},
		{"/demo/timing", d.timing.handler},
	}
}

// DemoPaths are the paths of the demo bottleneck endpoints (demo mode), one limit each.
func DemoPaths() []string {
	var out []string
	for _, e := range (&demoBottlenecks{}).endpoints() {
		out = append(out, e.path)
	}
	return out
}

// routes mounts the demo bottleneck endpoints on mux, each through wrap.
func (d *demoBottlenecks) routes(mux *http.ServeMux, wrap func(http.Handler) http.Handler) {
	for _, e := range d.endpoints() {
		mux.Handle("GET "+e.path, wrap(e.h))
	}
	mux.HandleFunc("GET /demo/timing/slow", d.timing.slowHandler) // the downstream of /demo/timing
}

func newDemoBottlenecks() (*demoBottlenecks, error) {
	down, err := startDownstream()
	if err != nil {
		return nil, err
	}
	d := &demoBottlenecks{down: down, keep: make(chan struct{})}
	return d, nil
}

// close ends the leaked goroutines and the downstream service.
func (d *demoBottlenecks) close() {
	close(d.keep)
	d.down.close()
}

func writeResult(w http.ResponseWriter, v int64) {
	w.Header()["Content-Type"] = jsonType
	w.Write(strconv.AppendInt([]byte(`{"result":`), v, 10))
	w.Write([]byte("}"))
}

// demoCPU is CPU-bound: about 1 ms of arithmetic per request.
func demoCPU(w http.ResponseWriter, r *http.Request) {
	writeResult(w, int64(apiperfHotHandlerSpin(hotSeed.Add(1), CPURounds)>>1))
}

// demoPool is a small mutex-guarded pool of PoolSize slots: each slot is a lock, a request
// takes a free one or queues on one (slot n mod PoolSize) until its holder is done.
type demoPool struct {
	slots [PoolSize]sync.Mutex
	next  atomic.Uint32
}

// get takes a free slot, or waits for one.
//
//go:noinline
func (p *demoPool) get() *sync.Mutex {
	for i := range p.slots {
		if p.slots[i].TryLock() {
			return &p.slots[i]
		}
	}
	s := &p.slots[p.next.Add(1)%PoolSize]
	s.Lock()
	return s
}

// put gives slot s back.
//
//go:noinline
func (p *demoPool) put(s *sync.Mutex) { s.Unlock() }

// Contention profiling that /demo/pool turns on, for the whole process, on its first request
// (as a service that wants its lock waits seen would at start): every blocking event of
// BlockProfileRate or more is recorded, shorter ones sampled; one mutex contention in
// MutexProfileFraction.
const (
	BlockProfileRate     = 10 * time.Microsecond
	MutexProfileFraction = 1
)

var contentionOnce sync.Once

// enableContention turns on the block and mutex profiles (process-wide, once).
func enableContention() {
	contentionOnce.Do(func() {
		runtime.SetBlockProfileRate(int(BlockProfileRate))
		runtime.SetMutexProfileFraction(MutexProfileFraction)
	})
}

// poolHandler holds a pool slot for PoolHold: off-CPU, limited by the pool's size.
func (d *demoBottlenecks) poolHandler(w http.ResponseWriter, r *http.Request) {
	enableContention()
	slot := d.pool.get()
	time.Sleep(PoolHold)
	d.pool.put(slot)
	writeResult(w, PoolSize)
}

// downstreamHandler calls the downstream service and relays its answer.
func (d *demoBottlenecks) downstreamHandler(w http.ResponseWriter, r *http.Request) {
	n, err := d.down.call(r.Context())
	if err != nil {
		http.Error(w, "downstream: "+err.Error(), http.StatusBadGateway)
		return
	}
	writeResult(w, n)
}

// leakHandler leaves a goroutine holding LeakBytes behind on every call, up to MaxLeaked.
func (d *demoBottlenecks) leakHandler(w http.ResponseWriter, r *http.Request) {
	n := d.leaked.Add(1)
	if n <= MaxLeaked {
		go apiperfLeakedWatcher(make([]byte, LeakBytes), d.keep)
	}
	writeResult(w, n)
}

// apiperfLeakedWatcher holds buf until keep is closed: the "forgotten goroutine" leak.
// Its name is unique so the verdict's wait sites can be checked for it.
//
//go:noinline
func apiperfLeakedWatcher(buf []byte, keep <-chan struct{}) {
	<-keep
	_ = buf[len(buf)-1]
}

// downstream is an HTTP service the demo target depends on, reached over at most
// DownstreamConns connections, each call taking DownstreamDelay.
type downstream struct {
	srv    *http.Server
	url    string
	client *http.Client
	done   chan struct{}
}

func startDownstream() (*downstream, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("starting the demo downstream: %w", err)
	}
	d := &downstream{
		srv: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(DownstreamDelay)
			io.WriteString(w, "1")
		}), ReadHeaderTimeout: 10 * time.Second},
		url: "http://" + ln.Addr().String() + "/",
		client: &http.Client{Transport: &http.Transport{
			MaxConnsPerHost: DownstreamConns, MaxIdleConnsPerHost: DownstreamConns,
		}, Timeout: 30 * time.Second},
		done: make(chan struct{}),
	}
	go func() {
		defer close(d.done)
		d.srv.Serve(ln)
	}()
	return d, nil
}

// call makes one request to the downstream service and returns the number it answered.
func (d *downstream) call(ctx context.Context) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(string(b), 10, 64)
}

func (d *downstream) close() {
	d.client.CloseIdleConnections()
	d.srv.Close()
	<-d.done
}
