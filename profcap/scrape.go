package profcap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/apiperf/apiperf/inflate"
)

// DefaultInterval is how often a Scraper scrapes when Interval is zero.
const DefaultInterval = time.Second

// MaxMetricsBytes bounds one metrics page; a bigger one fails that scrape with a warning
// that says so.
const MaxMetricsBytes = 8 << 20

// The metric names a Scraper reads (client_golang's Go and process collectors).
const (
	metricCPU       = "process_cpu_seconds_total"
	metricRSS       = "process_resident_memory_bytes"
	metricGoroutine = "go_goroutines"
	metricHeapInuse = "go_memstats_heap_inuse_bytes"
	// metricHeapGoal is read when exposed (client_golang and expvar-style exporters do), never
	// warned about: the heap size at which the next collection starts, set by what the last
	// one found live.
	metricHeapGoal = "go_memstats_next_gc_bytes"
	metricGCSum    = "go_gc_duration_seconds_sum"
	metricGCCount  = "go_gc_duration_seconds_count"
	// metricGOMAXPROCS is read when exposed (client_golang 1.20 and later), never warned about.
	metricGOMAXPROCS = "go_sched_gomaxprocs_threads"
)

var scrapedMetrics = []string{metricCPU, metricRSS, metricGoroutine, metricHeapInuse, metricGCSum, metricGCCount}

// Scraper scrapes a Prometheus text endpoint of the target every Interval
// while a load runs. Its zero Interval means DefaultInterval; a nil Client
// means http.DefaultClient. Each scrape must answer within Timeout (zero
// means Interval); a slower one counts as failed.
type Scraper struct {
	URL      string        `json:"url"`
	Interval time.Duration `json:"interval,omitempty"`
	Timeout  time.Duration `json:"timeout,omitempty"`
	Client   *http.Client  `json:"-"`
}

// Point is the target's state at one scrape. Offset is from the start of
// Run to the middle of the scrape's round trip; rates and deltas cover the time since the previous successful scrape.
// A field is nil when the target does not expose it (or, for rates, on the
// first scrape and after a counter reset).
type Point struct {
	Offset time.Duration `json:"offset_ns"`
	// CPUCores is the rate of process_cpu_seconds_total, in cores.
	CPUCores *float64 `json:"cpu_cores,omitempty"`
	// RSSBytes is process_resident_memory_bytes.
	RSSBytes *float64 `json:"rss_bytes,omitempty"`
	// Goroutines is go_goroutines.
	Goroutines *float64 `json:"goroutines,omitempty"`
	// HeapInuseBytes is go_memstats_heap_inuse_bytes.
	HeapInuseBytes *float64 `json:"heap_inuse_bytes,omitempty"`
	// HeapGoalBytes is go_memstats_next_gc_bytes: it moves only when a collection finds more
	// (or less) live heap, so it does not saw with the garbage between two collections.
	HeapGoalBytes *float64 `json:"heap_goal_bytes,omitempty"`
	// GCs is how many collections finished (go_gc_duration_seconds_count delta).
	GCs *float64 `json:"gcs,omitempty"`
	// GCPauseSeconds is their total stop-the-world pause (go_gc_duration_seconds_sum delta).
	GCPauseSeconds *float64 `json:"gc_pause_seconds,omitempty"`
	// GOMAXPROCS is go_sched_gomaxprocs_threads: the cores a Go target may use.
	GOMAXPROCS *float64 `json:"gomaxprocs,omitempty"`
	// RunWaitCores is how long the process's threads waited for a CPU per second (/proc
	// samples only): CPU it wanted and did not get, on a busy machine.
	RunWaitCores *float64 `json:"run_wait_cores,omitempty"`
}

// Series is a Scraper's timeline.
type Series struct {
	URL      string        `json:"url"`
	Interval time.Duration `json:"interval_ns"`
	Scrapes  int           `json:"scrapes"`
	Failed   int           `json:"failed"`
	Points   []Point       `json:"points"`
	// Cores is how many CPUs the process may use, when known (/proc samples).
	Cores int `json:"cores,omitempty"`
}

type observation struct {
	at     time.Duration
	values sampleSet
}

// Run scrapes at once and then every Interval until ctx is done, and
// returns the timeline and its warnings: one per metric never exposed and
// one counting failed scrapes. It never fails; the caller owns its goroutine.
func (s *Scraper) Run(ctx context.Context) (Series, []string) {
	interval := s.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = interval
	}
	client := s.Client
	if client == nil {
		client = http.DefaultClient
	}
	series := Series{URL: s.URL, Interval: interval}
	seen := map[string]bool{}
	var prev *observation
	var lastErr error
	start := time.Now()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for ctx.Err() == nil {
		sctx, cancel := context.WithTimeout(ctx, timeout)
		sent := time.Since(start)
		values, err := scrape(sctx, client, s.URL)
		at := sent + (time.Since(start)-sent)/2 // the target read its counters about midway
		cancel()
		if err != nil && ctx.Err() != nil {
			break // cut short by our own end, not the target's fault
		}
		series.Scrapes++
		if err != nil {
			series.Failed++
			lastErr = err
		} else {
			cur := &observation{at: at, values: values}
			series.Points = append(series.Points, point(prev, cur))
			for _, m := range scrapedMetrics {
				if _, ok := values[m]; ok {
					seen[m] = true
				}
			}
			prev = cur
		}
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
	var warns []string
	if series.Failed > 0 {
		warns = append(warns, fmt.Sprintf("metrics: %d of %d scrapes of %s failed; last: %v",
			series.Failed, series.Scrapes, s.URL, lastErr))
	}
	if len(series.Points) > 0 {
		for _, m := range scrapedMetrics {
			if !seen[m] {
				warns = append(warns, fmt.Sprintf("metrics: %s does not expose %s; skipped", s.URL, m))
			}
		}
	}
	return series, warns
}

// scrape fetches and parses one metrics page.
func scrape(ctx context.Context, client *http.Client, u string) (sampleSet, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("building request: %w", err)
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4;q=1,*/*;q=0.1")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scraping: %w", unwrapURLError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		return nil, errors.New(resp.Status)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/vnd.google.protobuf" {
		return nil, errors.New("target answered in protobuf; only the text format is read")
	}
	body := inflate.NewReader(resp.Body, MaxMetricsBytes)
	values, err := parseExposition(body)
	if body.Over() {
		return nil, fmt.Errorf("metrics page %v; skipped", &inflate.TooLargeError{Limit: MaxMetricsBytes})
	}
	if err != nil {
		return nil, fmt.Errorf("parsing metrics: %w", err)
	}
	return values, nil
}

// point turns an observation, and the one before it, into a Point.
func point(prev, cur *observation) Point {
	p := Point{Offset: cur.at}
	gauge := func(name string) *float64 {
		if v, ok := cur.values[name]; ok {
			return &v
		}
		return nil
	}
	p.RSSBytes = gauge(metricRSS)
	p.Goroutines = gauge(metricGoroutine)
	p.HeapInuseBytes = gauge(metricHeapInuse)
	p.HeapGoalBytes = gauge(metricHeapGoal)
	p.GOMAXPROCS = gauge(metricGOMAXPROCS)
	if prev == nil {
		return p
	}
	delta := func(name string) (float64, bool) {
		a, ok1 := prev.values[name]
		b, ok2 := cur.values[name]
		if !ok1 || !ok2 || b < a {
			return 0, false
		}
		return b - a, true
	}
	if dt := (cur.at - prev.at).Seconds(); dt > 0 {
		if d, ok := delta(metricCPU); ok {
			cores := d / dt
			p.CPUCores = &cores
		}
	}
	n, ok1 := delta(metricGCCount)
	sum, ok2 := delta(metricGCSum)
	if ok1 && ok2 {
		p.GCs, p.GCPauseSeconds = &n, &sum
	}
	return p
}

// Stat is the mean and maximum of one metric over a window's points.
type Stat struct {
	Mean float64 `json:"mean"`
	Max  float64 `json:"max"`
	N    int     `json:"n"`
}

// Summary is the target's metrics over a window of a Series, e.g. one sweep
// level. A Stat is nil when no point in the window had the metric.
type Summary struct {
	From           time.Duration `json:"from_ns"`
	To             time.Duration `json:"to_ns"`
	Points         int           `json:"points"`
	CPUCores       *Stat         `json:"cpu_cores,omitempty"`
	RSSBytes       *Stat         `json:"rss_bytes,omitempty"`
	Goroutines     *Stat         `json:"goroutines,omitempty"`
	HeapInuseBytes *Stat         `json:"heap_inuse_bytes,omitempty"`
	RunWaitCores   *Stat         `json:"run_wait_cores,omitempty"`
	// GCs and GCPauseSeconds are totals over the window.
	GCs            float64 `json:"gcs"`
	GCPauseSeconds float64 `json:"gc_pause_seconds"`
	// GCPauseMeanSeconds is the mean pause per collection, nil without any.
	GCPauseMeanSeconds *float64 `json:"gc_pause_mean_seconds,omitempty"`
}

// Summarize aggregates the points whose Offset lies in [from, to]. A point's
// rates cover the interval ending at its Offset.
func (s Series) Summarize(from, to time.Duration) Summary {
	sum := Summary{From: from, To: to}
	var cpu, rss, gor, heap, wait acc
	for _, p := range s.Points {
		if p.Offset < from || p.Offset > to {
			continue
		}
		sum.Points++
		cpu.add(p.CPUCores)
		rss.add(p.RSSBytes)
		gor.add(p.Goroutines)
		heap.add(p.HeapInuseBytes)
		wait.add(p.RunWaitCores)
		if p.GCs != nil {
			sum.GCs += *p.GCs
			sum.GCPauseSeconds += *p.GCPauseSeconds
		}
	}
	sum.CPUCores, sum.RSSBytes, sum.Goroutines, sum.HeapInuseBytes = cpu.stat(), rss.stat(), gor.stat(), heap.stat()
	sum.RunWaitCores = wait.stat()
	if sum.GCs > 0 {
		m := sum.GCPauseSeconds / sum.GCs
		sum.GCPauseMeanSeconds = &m
	}
	return sum
}

type acc struct {
	sum, max float64
	n        int
}

func (a *acc) add(v *float64) {
	if v == nil {
		return
	}
	if a.n == 0 || *v > a.max {
		a.max = *v
	}
	a.sum += *v
	a.n++
}

func (a acc) stat() *Stat {
	if a.n == 0 {
		return nil
	}
	return &Stat{Mean: a.sum / float64(a.n), Max: a.max, N: a.n}
}
