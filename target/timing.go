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

// The /demo/timing endpoint (demo mode) explains its own time: every request waits
// TimingDB + TimingApp and says so in Server-Timing ("db;dur=2, app;dur=0.5"); every TimingSlowEvery-th request (the
// 1st, the 101st, ...; ?every=N) is made slow instead: it waits TimingSlow (?slow=1s) and
// says so in db ("db;dur=60;desc=\"slow query\""). It remembers the trace ids of the
// requests it made slow (GET /demo/timing/slow), so a test can check that a load generator's
// slowest requests are exactly those.
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

var timingFast = []string{"db;dur=" + ms(TimingDB) + ", app;dur=" + ms(TimingApp)}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', -1, 64)
}

func (d *timingDemo) handler(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	every, slow := int64(TimingSlowEvery), TimingSlow
	if r.URL.RawQuery != "" {
		q := r.URL.Query()
		if n, err := strconv.ParseInt(q.Get("every"), 10, 64); err == nil && n > 0 {
			every = n
		}
		if v, err := time.ParseDuration(q.Get("slow")); err == nil && v > 0 && v <= time.Minute {
			slow = v
		}
	}
	if (d.n.Add(1)-1)%every != 0 {
		if wait(r, TimingDB+TimingApp) {
			h["Server-Timing"] = timingFast
			w.Write([]byte("ok\n"))
		}
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
	if !wait(r, slow+TimingApp) {
		return
	}
	// Two header lines: the metrics of both count.
	h["Server-Timing"] = []string{`db;dur=` + ms(slow) + `;desc="slow query"`, "app;dur=" + ms(TimingApp)}
	w.Write([]byte("slow\n"))
}

// wait sleeps d, or until the request is cancelled (false).
func wait(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
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
