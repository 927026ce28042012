package report

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/result"
)

// TextOptions chooses the optional blocks of the text summary.
type TextOptions struct {
	Latency     bool // wrk's --latency: the percentile distribution (and, open loop, the spectrum)
	Uncorrected bool // wrk2's -U: the uncorrected latency block
}

// Header writes wrk's first two lines: "Running 10s test @ URL" and the thread/connection line.
func Header(w io.Writer, r *result.Run) error {
	return render(w, "the header", func(w io.Writer) { header(w, r) })
}

func header(w io.Writer, r *result.Run) {
	r.Redact()
	d := r.Load.Duration.Duration()
	what := FormatTestDuration(d)
	if d == 0 {
		what = fmt.Sprintf("%d requests", r.Load.Requests)
	}
	fmt.Fprintf(w, "Running %s test @ %s\n", what, r.Scenario.URL)
	if c := r.Cluster; c != nil && c.Threads > 0 { // scaled out: every worker's threads, wrk's words kept
		fmt.Fprintf(w, "  %d threads and %d connections on %d workers", c.Threads, r.Load.Connections, c.Workers)
	} else {
		fmt.Fprintf(w, "  %d threads and %d connections", r.Load.Threads, r.Load.Connections)
	}
	if r.Load.HTTP2 {
		fmt.Fprintf(w, " (HTTP/2, %d streams each)", r.Load.StreamsPerConn())
	}
	fmt.Fprintln(w)
}

// Text writes the summary of step s in wrk's layout, line for line, followed by what wrk
// does not show (tail percentiles, error classes, status codes, success rate).
func Text(w io.Writer, r *result.Run, s *measure.Step, o TextOptions) error {
	return render(w, "the summary", func(w io.Writer) { textSummary(w, r, s, o) })
}

func textSummary(w io.Writer, r *result.Run, s *measure.Step, o TextOptions) {
	open := s.Open != nil
	if open {
		fmt.Fprintf(w, "  Latency is corrected for coordinated omission: measured from when each request was due.\n")
	}
	fmt.Fprintf(w, "  Thread Stats%6s%11s%8s%12s\n", "Avg", "Stdev", "Max", "+/- Stdev")
	lat := s.Latency
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	fmt.Fprintf(w, "    %-10s%s%s%s%8.2f%%\n", "Latency",
		units(FormatTimeUS(us(lat.Mean())), 8), units(FormatTimeUS(us(lat.Stdev())), 10),
		units(FormatTimeUS(us(lat.Max())), 9), lat.WithinStdev())
	rs := s.ThreadRPS
	fmt.Fprintf(w, "    %-10s%s%s%s%8.2f%%\n", "Req/Sec",
		units(FormatMetric(rs.Mean), 8), units(FormatMetric(rs.Stdev), 10),
		units(FormatMetric(rs.Max), 9), rs.WithinStdev)
	switch {
	case open && o.Latency: // wrk2 prints its distributions with -L/--latency only
		hdrBlock(w, lat, "Recorded Latency")
		if o.Uncorrected && s.Uncorrected != nil {
			hdrBlock(w, s.Uncorrected, "Uncorrected Latency (measured without taking delayed starts into account)")
		}
		fmt.Fprintln(w, "----------------------------------------------------------")
	case o.Latency:
		fmt.Fprintln(w, "  Latency Distribution")
		for _, p := range []float64{50, 75, 90, 99} {
			fmt.Fprintf(w, "%7.0f%%%s\n", p, units(FormatDuration(lat.Percentile(p)), 10))
		}
	}
	elapsed := s.Elapsed.Duration()
	fmt.Fprintf(w, "  %d requests in %s, %sB read\n", s.InWindow(), FormatTimeUS(us(elapsed)), FormatBinary(float64(s.Bytes-s.Drained.Bytes)))
	e := s.Errors
	if e.Socket() > 0 {
		fmt.Fprintf(w, "  Socket errors: connect %d, read %d, write %d, timeout %d\n", e.Connect, e.Read, e.Write, e.Timeout)
	}
	if non := nonSuccess(s); non > 0 {
		fmt.Fprintf(w, "  Non-2xx or 3xx responses: %d\n", non)
	}
	fmt.Fprintf(w, "Requests/sec: %9.2f\n", s.QPS())
	fmt.Fprintf(w, "Transfer/sec: %10sB\n", FormatBinary(s.ByteRate()))
	extras(w, s)
	if o.Latency {
		exemplarLines(w, s)
	}
	endpoints(w, r, s)
}

// nonSuccess counts responses with a status above 399, which is what wrk's line counts.
func nonSuccess(s *measure.Step) int64 {
	var n int64
	for code, c := range s.Status {
		if code > 399 {
			n += c
		}
	}
	return n
}

func hdrBlock(w io.Writer, h *measure.Histogram, desc string) {
	fmt.Fprintf(w, "  Latency Distribution (HdrHistogram - %s)\n", desc)
	for _, p := range []float64{50, 75, 90, 99, 99.9, 99.99, 99.999, 100} {
		fmt.Fprintf(w, "%7.3f%%%s\n", p, units(FormatDuration(h.Percentile(p)), 10))
	}
	fmt.Fprintf(w, "\n  Detailed Percentile spectrum:\n")
	_ = h.WriteSpectrum(w)
	fmt.Fprintln(w)
}

// extras is what apiperf adds after wrk's lines.
func extras(w io.Writer, s *measure.Step) {
	fmt.Fprintln(w, "apiperf:")
	view := "responses"
	if s.Open != nil {
		view = "responses, corrected"
	}
	lat := s.Latency
	fmt.Fprintf(w, "  Latency (%s): p50 %s, p90 %s, p99 %s, p99.9 %s, p99.99 %s, max %s\n", view,
		FormatDuration(lat.Percentile(50)), FormatDuration(lat.Percentile(90)), FormatDuration(lat.Percentile(99)),
		FormatDuration(lat.Percentile(99.9)), FormatDuration(lat.Percentile(99.99)), FormatDuration(lat.Max()))
	if s.Uncorrected != nil {
		u := s.Uncorrected
		fmt.Fprintf(w, "  Latency (responses, uncorrected): p50 %s, p90 %s, p99 %s, p99.9 %s, max %s\n",
			FormatDuration(u.Percentile(50)), FormatDuration(u.Percentile(90)), FormatDuration(u.Percentile(99)),
			FormatDuration(u.Percentile(99.9)), FormatDuration(u.Max()))
	}
	if s.Errors.Timeout > 0 && s.AllAttempts != nil {
		a := s.AllAttempts
		fmt.Fprintf(w, "  Latency (all attempts, timeouts included): p50 %s, p99 %s, max %s\n",
			FormatDuration(a.Percentile(50)), FormatDuration(a.Percentile(99)), FormatDuration(a.Max()))
	}
	serverTimingLines(w, s)
	e := s.Errors
	fmt.Fprintf(w, "  Errors: connect %d, read %d, write %d, timeout %d, status %d, protocol %d\n",
		e.Connect, e.Read, e.Write, e.Timeout, e.Status, e.Protocol)
	if s.GRPC != nil {
		fmt.Fprintf(w, "  gRPC status: %s\n", measure.GRPCStatusLine(s.Status))
	} else {
		fmt.Fprintf(w, "  Status codes: %s\n", statusLine(s.Status))
	}
	fmt.Fprintf(w, "  Success rate: %s%% (%d of %d attempts)\n", FormatSuccess(s.SuccessRate()), s.Successes, s.Attempts)
	if s.HTTP2 != nil {
		fmt.Fprintf(w, "  Protocol: %s\n", s.HTTP2)
	}
	if s.GRPC != nil {
		fmt.Fprintf(w, "  gRPC: %s\n", s.GRPC)
	}
	streamLines(w, s)
	if d := s.Drained; d.Attempts > 0 {
		fmt.Fprintf(w, "  Drained: %d requests were in flight when the %s window closed and ended after it (%d responses); their latency is recorded, but not in Requests/sec\n",
			d.Attempts, FormatTimeUS(float64(s.Elapsed.Duration())/float64(time.Microsecond)), d.Requests)
	}
	if o := s.Open; o != nil {
		fmt.Fprintf(w, "  Rate: target %.2f req/s, achieved %.2f req/s; %d late sends, max schedule lag %s, %d connections used\n",
			o.TargetRate, s.SendRate(), o.LateSends, FormatDuration(o.MaxLag.Duration()), o.Connections)
		if l := s.SendLag; l != nil && l.Count() > 0 {
			fmt.Fprintf(w, "  Send lag (due to sent, in the corrected latency): p50 %s, p99 %s, max %s\n",
				FormatDuration(l.Percentile(50)), FormatDuration(l.Percentile(99)), FormatDuration(l.Max()))
		}
	}
	if s.GeneratorLimit != nil {
		fmt.Fprintf(w, "  Generator-limited: %s\n", s.GeneratorLimit.Detail())
	}
	if s.Generator.Bound() {
		g := s.Generator
		fmt.Fprintf(w, "  Generator-bound: apiperf used %.2f of its %g cores and waited %.2f s per second for a CPU: the numbers may understate the target\n",
			g.CPUCores(), g.Cores, g.RunWaitCores())
	}
	for _, ws := range s.Warnings {
		fmt.Fprintf(w, "  Warning: %s\n", ws)
	}
}

func statusLine(m map[int]int64) string { return statusCodes(m, "%d=%d", " ", "none") }

// statusCodes lists status counts in code order, each formatted with pair (code, count),
// joined by sep; empty when there are none.
func statusCodes(m map[int]int64, pair, sep, empty string) string {
	if len(m) == 0 {
		return empty
	}
	codes := make([]int, 0, len(m))
	for c := range m {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = fmt.Sprintf(pair, c, m[c])
	}
	return strings.Join(parts, sep)
}
