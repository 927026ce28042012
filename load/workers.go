package load

import (
	"sync"
	"time"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
)

// workerSet is the goroutine workers of a run, one per connection: the driver of the closed
// loop on goroutines, and the part of the open loop's and HTTP/2's drivers that interrupts,
// counts and ends their connections.
type workerSet struct {
	e   *engine
	mu  sync.Mutex // guards all for interruption
	all []*worker
}

// add adds w, which is interrupted at once when the run was cancelled.
func (s *workerSet) add(w *worker) {
	s.mu.Lock()
	s.all = append(s.all, w)
	s.mu.Unlock()
	if s.e.cancel.Load() {
		w.interrupt()
	}
}

// count is how many workers there are.
func (s *workerSet) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.all)
}

// interrupt makes every blocked read or write return now.
func (s *workerSet) interrupt() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.all {
		w.interrupt()
	}
}

func (s *workerSet) lastDone() int64 {
	var last int64
	s.mu.Lock()
	for _, w := range s.all {
		last = max(last, w.samples.lastDone)
	}
	s.mu.Unlock()
	return last
}

func (s *workerSet) gauges(iv *measure.Interval) { iv.Connections = s.count() }

func (s *workerSet) warning() string { return "" }

// runClosed runs the closed loop on a goroutine per connection (--no-keepalive, scripts
// that watch responses or delay requests, APIPERF_IO=goroutines); reqs are the connections'
// requesters.
func (e *engine) runClosed(o options, names []string, reqs []scenario.Requester) (*measure.Step, error) {
	ws := &workerSet{e: e}
	e.drv = ws
	budgets := e.budgets(len(reqs))
	for i, req := range reqs {
		w := newWorker(e, i, req)
		w.budget = budgets[i]
		ws.all = append(ws.all, w)
	}
	e.base = time.Now()
	var wg sync.WaitGroup
	for _, w := range ws.all {
		if w.budget == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.closedLoop()
		}()
	}
	e.supervise(&wg, o)
	return e.finish(names), nil
}
