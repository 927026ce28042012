package exposition

import (
	"bytes"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestAppendFloat(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{
		{0, "0"},                      // zero without a fraction
		{1, "1"},                      // integers print as integers
		{0.0005, "0.0005"},            // a bucket bound, shortest form
		{1.5e-05, "1.5e-05"},          // small values in exponent form, as Go's 'g'
		{1e21, "1e+21"},               // large ones too
		{math.Inf(1), "+Inf"},         // the format's spelling of infinity
		{math.Inf(-1), "-Inf"},        // and of its negative
		{math.NaN(), "NaN"},           // and of NaN
		{123456789, "1.23456789e+08"}, // Go's shortest 'g' form, which Prometheus parses
	} {
		if got := string(AppendFloat(nil, tc.in)); got != tc.want {
			t.Errorf("AppendFloat(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestPage: a page with every kind of line, byte for byte.
func TestPage(t *testing.T) {
	var p Page
	p.Family("a_total", "Help with a \\ backslash\nand a newline.", "counter")
	p.Sample("a_total", 3, "path", `/x"y\z`+"\n", "code", "200")
	p.Metric("b", "A gauge.", "gauge", 0.25)
	h := NewHistogram([]float64{0.1, 1})
	h.ObserveN(0.05, 2) // first bucket
	h.ObserveN(0.1, 1)  // a value on a bound belongs to that bound's bucket
	h.ObserveN(5, 1)    // above every bound: +Inf only
	p.Histogram("c_seconds", "A histogram.", h)
	want := `# HELP a_total Help with a \\ backslash\nand a newline.
# TYPE a_total counter
a_total{path="/x\"y\\z\n",code="200"} 3
# HELP b A gauge.
# TYPE b gauge
b 0.25
# HELP c_seconds A histogram.
# TYPE c_seconds histogram
c_seconds_bucket{le="0.1"} 3
c_seconds_bucket{le="1"} 3
c_seconds_bucket{le="+Inf"} 4
c_seconds_sum 5.2
c_seconds_count 4
`
	if got := string(p.Bytes()); got != want {
		t.Errorf("page =\n%s\nwant\n%s", got, want)
	}
}

// TestRuntimeMetrics: the Go and process metrics carry the names apiperf's scraper reads,
// with plausible values, on a page promtool accepts (when it is installed).
func TestRuntimeMetrics(t *testing.T) {
	srv := httptest.NewServer(Handler(func(p *Page) {
		WriteGo(p)
		WriteProcess(p)
	}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != ContentType {
		t.Errorf("Content-Type = %q, want %q", ct, ContentType)
	}
	value := func(name string) float64 {
		t.Helper()
		m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`).FindSubmatch(body)
		if m == nil {
			t.Fatalf("no sample %s on the page:\n%s", name, body)
		}
		v, err := strconv.ParseFloat(string(m[1]), 64)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return v
	}
	for name, ok := range map[string]func(float64) bool{
		"go_goroutines":                 func(v float64) bool { return v >= 1 },
		"go_memstats_heap_inuse_bytes":  func(v float64) bool { return v > 0 },
		"go_gc_duration_seconds_count":  func(v float64) bool { return v >= 0 },
		"go_gc_duration_seconds_sum":    func(v float64) bool { return v >= 0 },
		"go_sched_gomaxprocs_threads":   func(v float64) bool { return v >= 1 },
		"process_cpu_seconds_total":     func(v float64) bool { return v >= 0 },
		"process_resident_memory_bytes": func(v float64) bool { return v > 1<<20 },
		"process_open_fds":              func(v float64) bool { return v >= 3 },
		"process_start_time_seconds":    func(v float64) bool { return v > 1.5e9 },
	} {
		if v := value(name); !ok(v) {
			t.Errorf("%s = %v, implausible", name, v)
		}
	}
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Log("promtool missing: the page was not linted")
		return
	}
	check := exec.Command(promtool, "check", "metrics")
	check.Stdin = bytes.NewReader(body)
	if out, err := check.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "" {
		t.Errorf("promtool check metrics: %v\n%s\n--- page:\n%s", err, out, body)
	}
}
