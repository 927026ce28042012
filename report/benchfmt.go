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

// WriteBench writes r in the Go benchmark format that `benchstat` reads: a comment naming
// the tool and the full URL, configuration lines that identify the benchmark but not the
// port of the day (so two runs of the same API on random ports land in one benchstat table),
// unit lines saying which way is better, then one line per step (each repetition is a
// sample), named BenchmarkAPI/<METHOD>_<path>/<level>, e.g.
//
//	BenchmarkAPI/GET_healthz/c=50  480000  812345 ns/op  48000.00 req/s  720000 p50-ns/op  1200000 p99-ns/op  100.000 success-%
//
// Times are in ns/op-style units, which benchstat converts to sec/op-style units and scales
// (812.3µ); the iteration count is the number of complete responses and ns/op is their mean
// latency.
func WriteBench(w io.Writer, r *result.Run) error {
	r.Redact()
	bw := bufio.NewWriter(w)
	if r.Tool != "" {
		fmt.Fprintf(bw, "# %s: %s\n", benchValue(r.Tool), benchValue(r.Scenario.URL))
	}
	fmt.Fprintf(bw, "apiperf-kind: %s\n", benchValue(r.Kind))
	if host := benchHost(r.Scenario.URL); host != "" {
		fmt.Fprintf(bw, "apiperf-host: %s\n", host)
	}
	fmt.Fprintf(bw, "Unit req/s better=higher\nUnit success-%% better=higher\n")
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
	var mean, p50, p99 int64
	if s.Latency != nil && s.Latency.Count() > 0 {
		mean = int64(s.Latency.Mean())
		p50 = int64(s.Latency.Percentile(50))
		p99 = int64(s.Latency.Percentile(99))
	}
	level := strings.TrimSuffix(s.Label, "/s")
	if level == "" {
		level = "level"
	}
	fmt.Fprintf(w, "%s/%s\t%d\t%d ns/op\t%.2f req/s\t%d p50-ns/op\t%d p99-ns/op\t%.3f success-%%%s\n",
		name, benchName(level), max(s.Requests, 1), mean, s.QPS(), p50, p99, s.SuccessRate(), benchStreams(s.Streams))
}

// benchStreams is the streams' metrics of a step (time to first message, gaps), "" for none.
func benchStreams(st *measure.Streams) string {
	if st == nil {
		return ""
	}
	return fmt.Sprintf("\t%d first-p50-ns/op\t%d first-p99-ns/op\t%d gap-p50-ns/op\t%d gap-p99-ns/op",
		int64(st.First.Percentile(50)), int64(st.First.Percentile(99)), int64(st.Gap.Percentile(50)), int64(st.Gap.Percentile(99)))
}

// benchHost is the URL's host name without its port: the port of a test target changes
// from run to run and would split benchstat's tables.
func benchHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return benchName(u.Hostname())
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
