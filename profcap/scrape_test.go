package profcap

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestScraperBadEndpoints(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    string // substring of the single warning
	}{
		{
			// an HTML page is garbage: counted, reported with its line.
			name: "html",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				w.Write([]byte("<!DOCTYPE html>\n<p>hello</p>"))
			},
			want: "failed; last: parsing metrics: text format parsing error in line 1",
		},
		{
			// random bytes do not panic the parser.
			name: "binary",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				w.Write([]byte{0x1f, 0x8b, 0, 0xff, '{', '"', '\n', '}'})
			},
			want: "failed; last: parsing metrics:",
		},
		{
			// a missing endpoint names its status.
			name:    "404",
			handler: http.NotFound,
			want:    "failed; last: 404 Not Found",
		},
		{
			// a scrape slower than the interval is abandoned and counted.
			name: "slow",
			handler: func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-r.Context().Done():
				case <-time.After(2 * time.Second):
				}
			},
			want: "context deadline exceeded",
		},
		{
			// the protobuf exposition is refused by name, not misparsed.
			name: "protobuf",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited")
				w.Write([]byte{1, 2, 3})
			},
			want: "only the text format is read",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 250*time.Millisecond)
			defer cancel()
			s := &Scraper{URL: srv.URL + "/metrics", Interval: 40 * time.Millisecond, Client: srv.Client()}
			series, warns := s.Run(ctx)
			if len(series.Points) != 0 {
				t.Errorf("Run got %d points from a bad endpoint, want 0", len(series.Points))
			}
			if series.Scrapes < 2 || series.Failed != series.Scrapes {
				t.Errorf("Run counted %d failed of %d scrapes, want all of >= 2", series.Failed, series.Scrapes)
			}
			if len(warns) != 1 || !strings.Contains(warns[0], tt.want) || !strings.Contains(warns[0], "scrapes of "+s.URL) {
				t.Errorf("Run warnings = %q, want one containing %q", warns, tt.want)
			}
		})
	}
}

func TestScraperConnectionRefusedAndCancelled(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/metrics"
	ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Millisecond)
	defer cancel()
	series, warns := (&Scraper{URL: url, Interval: 30 * time.Millisecond}).Run(ctx)
	if series.Failed == 0 || len(warns) != 1 || !strings.Contains(warns[0], "connection refused") {
		t.Errorf("Run against a closed port: %d failed, warnings %q; want failures and one connection refused warning", series.Failed, warns)
	}

	done, cancelNow := context.WithCancel(context.Background())
	cancelNow()
	start := time.Now()
	series, warns = (&Scraper{URL: url}).Run(done)
	if time.Since(start) > 5*time.Second || series.Scrapes != 0 || len(warns) != 0 {
		t.Errorf("Run with a done context: %d scrapes, warnings %q after %v; want an immediate, empty return",
			series.Scrapes, warns, time.Since(start))
	}
	if series.Interval != DefaultInterval {
		t.Errorf("Run interval = %v, want the default %v", series.Interval, DefaultInterval)
	}
}

func f64(v float64) *float64 { return &v }

// show prints an optional value for failure messages.
func show(v *float64) any {
	if v == nil {
		return nil
	}
	return *v
}

func TestPoint(t *testing.T) {
	full := func(at time.Duration, cpu, gcSum, gcCount float64) *observation {
		return &observation{at: at, values: sampleSet{
			metricCPU: cpu, metricRSS: 100, metricGoroutine: 7, metricHeapInuse: 50,
			metricGCSum: gcSum, metricGCCount: gcCount,
		}}
	}
	tests := []struct {
		name       string
		prev, cur  *observation
		wantCPU    *float64
		wantGCs    *float64
		wantPause  *float64
		wantGauges bool
	}{
		// the first point has gauges but no rates.
		{"first", nil, full(time.Second, 3, 0.1, 4), nil, nil, nil, true},
		// 1.5 CPU seconds over 500ms is 3 cores; 2 GCs took 0.02s.
		{"rates", full(time.Second, 3, 0.1, 4), full(1500*time.Millisecond, 4.5, 0.12, 6), f64(3), f64(2), f64(0.02), true},
		// a counter that went down (target restarted) gives no rate rather than a negative one.
		{"reset", full(time.Second, 30, 5, 400), full(2*time.Second, 1, 0, 1), nil, nil, nil, true},
		// metrics the target lacks stay nil.
		{"absent", &observation{at: 0, values: sampleSet{"x": 1}}, &observation{at: time.Second, values: sampleSet{"x": 2}}, nil, nil, nil, false},
	}
	eq := func(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || near(*a, *b)) }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := point(tt.prev, tt.cur)
			if !eq(p.CPUCores, tt.wantCPU) || !eq(p.GCs, tt.wantGCs) || !eq(p.GCPauseSeconds, tt.wantPause) {
				t.Errorf("point: cpu %v gcs %v pause %v; want %v %v %v", show(p.CPUCores), show(p.GCs), show(p.GCPauseSeconds),
					show(tt.wantCPU), show(tt.wantGCs), show(tt.wantPause))
			}
			if got := p.Goroutines != nil && p.RSSBytes != nil && p.HeapInuseBytes != nil; got != tt.wantGauges {
				t.Errorf("point gauges present = %v, want %v", got, tt.wantGauges)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	s := Series{Points: []Point{
		{Offset: 1 * time.Second, Goroutines: f64(10)},
		{Offset: 2 * time.Second, Goroutines: f64(30), CPUCores: f64(1), GCs: f64(2), GCPauseSeconds: f64(0.004)},
		{Offset: 3 * time.Second, Goroutines: f64(20), CPUCores: f64(0.5), GCs: f64(0), GCPauseSeconds: f64(0)},
		{Offset: 4 * time.Second, Goroutines: f64(90), CPUCores: f64(2)},
	}}
	tests := []struct {
		name     string
		from, to time.Duration
		want     Summary
	}{
		// bounds are inclusive; the first point has no CPU rate so CPU has n=2.
		{"window", time.Second, 3 * time.Second, Summary{
			From: time.Second, To: 3 * time.Second, Points: 3,
			Goroutines: &Stat{Mean: 20, Max: 30, N: 3}, CPUCores: &Stat{Mean: 0.75, Max: 1, N: 2},
			GCs: 2, GCPauseSeconds: 0.004, GCPauseMeanSeconds: f64(0.002),
		}},
		// a window with no points has nil stats and no mean pause.
		{"empty", 10 * time.Second, 20 * time.Second, Summary{From: 10 * time.Second, To: 20 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := json.Marshal(s.Summarize(tt.from, tt.to))
			want, _ := json.Marshal(tt.want)
			if string(got) != string(want) {
				t.Errorf("Summarize(%v, %v) = %s, want %s", tt.from, tt.to, got, want)
			}
		})
	}
}
