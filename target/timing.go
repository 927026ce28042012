package target

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apiperf/apiperf/traceparent"
)

// The /demo/timing endpoint (demo mode) explains its own time: every response sends
// Server-Timing "db;dur=TimingDB, app;dur=TimingApp"; every TimingSlowEvery-th request (the
// 1st, the 101st, ...) is made slow instead: it waits TimingSlow and says
// "db;dur=<TimingSlow>;desc=\"slow query\"". It remembers the trace ids of the requests it
// made slow (GET /demo/timing/slow), so a test can check that a load generator's slowest
// requests are exactly those.
const (
	TimingDB        = 2 * time.Millisecond
	TimingApp       = 500 * time.Microsecond
	TimingSlowEvery = 100
	TimingSlow      = 60 * time.Millisecond
	maxSlowKept     = 10_000
)

// timingDemo is the state of /demo/timing.
type timingDemo struct {
	n    atomic.Int64
	mu   sync.Mutex
	slow []string // trace ids of the requests made slow ("" when a request had none)
}

var (
	timingFast = []string{"db;dur=" + ms(TimingDB) + ", app;dur=" + ms(TimingApp)}
	timingSlow = []string{`db;dur=` + ms(TimingSlow) + `;desc="slow query"`, "app;dur=" + ms(TimingApp)}
)

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', -1, 64)
}

func (d *timingDemo) handler(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	if (d.n.Add(1)-1)%TimingSlowEvery != 0 {
		h["Server-Timing"] = timingFast
		w.Write([]byte("ok\n"))
		return
	}
	id := ""
	if t, _, _, ok := traceparent.Parse([]byte(r.Header.Get(traceparent.Name))); ok {
		id = t.String()
	}
	d.mu.Lock()
	if len(d.slow) < maxSlowKept {
		d.slow = append(d.slow, id)
	}
	d.mu.Unlock()
	select {
	case <-time.After(TimingSlow):
	case <-r.Context().Done():
		return
	}
	h["Server-Timing"] = timingSlow // two header lines: the metrics of both count
	w.Write([]byte("slow\n"))
}

// slowTraces lists the trace ids of the requests made slow so far, in order.
func (d *timingDemo) slowTraces() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.slow...)
}

func (d *timingDemo) slowHandler(w http.ResponseWriter, r *http.Request) {
	w.Header()["Content-Type"] = jsonType
	json.NewEncoder(w).Encode(map[string]any{"requests": d.n.Load(), "slow_trace_ids": d.slowTraces()})
}

// SlowTraces lists the trace ids of the requests /demo/timing made slow, in the order they
// came; nil outside demo mode.
func (s *Server) SlowTraces() []string {
	if s.demo == nil {
		return nil
	}
	return s.demo.timing.slowTraces()
}
