package live

import (
	_ "embed"
	"encoding/json"
	"net/http"
	"time"

	"github.com/apiperf/apiperf/exposition"
	"github.com/apiperf/apiperf/measure"
)

// maxRecent is how many intervals the live page keeps (10 minutes of seconds).
const maxRecent = 600

// point is one interval as the live page draws it.
type point struct {
	T          float64          `json:"t"` // seconds since the session started (end of the interval)
	Level      string           `json:"level"`
	LevelN     int              `json:"level_n,omitempty"`
	Levels     int              `json:"levels,omitempty"`
	QPS        float64          `json:"qps"`
	P50        float64          `json:"p50_ms"`
	P99        float64          `json:"p99_ms"`
	Max        float64          `json:"max_ms"`
	Errors     int64            `json:"errors"`
	ByClass    measure.Errors   `json:"errors_by_class"`
	Status     map[string]int64 `json:"status"`
	Conns      int              `json:"connections"`
	InFlight   *int             `json:"in_flight,omitempty"`
	TargetRate float64          `json:"target_rate,omitempty"`
	LagMs      float64          `json:"lag_ms,omitempty"`
	Stream     *streamPoint     `json:"stream,omitempty"` // a streamed run's figures (stream.go)
}

func newPoint(st Phase, iv *measure.Interval, start time.Time) point {
	sec := iv.Second()
	p := point{
		T:     iv.StepStart.Add((iv.Start + iv.Length).Duration()).Sub(start).Seconds(),
		Level: st.Label, LevelN: st.Level, Levels: st.Levels,
		QPS: iv.QPS(), P50: sec.P50, P99: sec.P99, Max: sec.Max,
		Errors: iv.Errors.Total(), ByClass: iv.Errors, Status: map[string]int64{},
		Conns: iv.Connections, TargetRate: iv.TargetRate, LagMs: float64(iv.Lag) / float64(time.Millisecond),
		Stream: newStreamPoint(iv),
	}
	for code, n := range iv.Status {
		p.Status[itoa(code)] += n
	}
	if iv.InFlight >= 0 {
		n := iv.InFlight
		p.InFlight = &n
	}
	return p
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

//go:embed page.html
var pageHTML []byte

// liveState is what /live.json returns.
type liveState struct {
	Kind    string            `json:"kind"`
	Target  string            `json:"target"`
	Labels  map[string]string `json:"labels,omitempty"`
	Elapsed float64           `json:"elapsed_s"`
	Level   string            `json:"level"`
	LevelN  int               `json:"level_n,omitempty"`
	Levels  int               `json:"levels,omitempty"`
	Points  []point           `json:"points"`
}

func (s *Session) handler() http.Handler {
	mux := http.NewServeMux()
	prom := exposition.Handler(s.metrics.write)
	mux.Handle("/metrics", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.scraped()
		prom.ServeHTTP(w, r)
	}))
	mux.HandleFunc("/live.json", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		st := liveState{Kind: s.cfg.Kind, Target: s.cfg.Target, Labels: s.cfg.Labels, Elapsed: time.Since(s.start).Seconds(),
			Level: s.cur.Label, LevelN: s.cur.Level, Levels: s.cur.Levels, Points: append([]point(nil), s.recent...)}
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(st)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src data:; script-src 'unsafe-inline'; style-src 'unsafe-inline'")
		_, _ = w.Write(pageHTML)
	})
	return mux
}
