package report

import (
	"bufio"
	"fmt"
	"io"
	"net/url"
	"strings"
	"unicode"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/result"
)

// WriteBench writes r in the Go benchmark format that `benchstat` reads: a few configuration
// lines, then one line per step (each repetition is a sample), named
// BenchmarkAPI/<METHOD>_<path>/<level>, e.g.
//
//	BenchmarkAPI/GET_healthz/c=50  480000  812345 ns/op  48000 req/s  0.72 p50-ms  1.2 p99-ms  100 success-%
//
// The iteration count is the number of complete responses and ns/op is their mean latency.
func WriteBench(w io.Writer, r *result.Run) error {
	r.Redact()
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "apiperf-kind: %s\n", benchValue(r.Kind))
	fmt.Fprintf(bw, "apiperf-url: %s\n", benchValue(r.Scenario.URL))
	if r.Tool != "" {
		fmt.Fprintf(bw, "apiperf-tool: %s\n", benchValue(r.Tool))
	}
	name := "BenchmarkAPI/" + benchName(r.Scenario.MethodOrDefault()+"_"+benchPath(r.Scenario.URL))
	for _, s := range r.Steps {
		if s == nil {
			continue
		}
		writeBenchStep(bw, name, s)
	}
	return bw.Flush()
}

func writeBenchStep(w io.Writer, name string, s *measure.Step) {
	var mean, p50, p99 float64
	if s.Latency != nil && s.Latency.Count() > 0 {
		mean = float64(s.Latency.Mean())
		p50 = float64(s.Latency.Percentile(50)) / 1e6
		p99 = float64(s.Latency.Percentile(99)) / 1e6
	}
	level := strings.TrimSuffix(s.Label, "/s")
	if level == "" {
		level = "level"
	}
	fmt.Fprintf(w, "%s/%s\t%d\t%.0f ns/op\t%.2f req/s\t%.3f p50-ms\t%.3f p99-ms\t%.3f success-%%\n",
		name, benchName(level), max(s.Requests, 1), mean, s.QPS(), p50, p99, s.SuccessRate())
}

// benchPath is the URL's path without its leading slash ("root" for "/").
func benchPath(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || strings.Trim(u.Path, "/") == "" {
		return "root"
	}
	return strings.Trim(u.Path, "/")
}

// benchName makes s usable in a benchmark name: no spaces or slashes.
func benchName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return '_'
		}
		return r
	}, s)
}

// benchValue keeps a configuration value on one line.
func benchValue(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}
