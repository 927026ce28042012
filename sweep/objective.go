package sweep

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// DefaultObjective is the objective a level must meet to count toward the knee.
const DefaultObjective = "p99<=500ms,success>=99.9%"

// Metrics an objective can bound. Latency metrics are the percentiles a Level keeps, its
// mean and its maximum.
const (
	MetricSuccess = "success" // success rate in percent, a lower bound
	MetricErrors  = "errors"  // failed attempts in percent, an upper bound
	MetricQPS     = "qps"     // completed requests per second, a lower bound
	MetricMean    = "mean"    // mean latency, an upper bound
	MetricMax     = "max"     // the slowest response, an upper bound
)

// latencyMetrics are the latencies an objective may bound, as written.
var latencyMetrics = []string{"p50", "p75", "p90", "p95", "p99", "p99.9", "p99.99", MetricMean, MetricMax}

// metricAliases are other names users write for a metric (k6's, vegeta's, oha's words).
var metricAliases = map[string]string{"error_rate": MetricErrors, "error-rate": MetricErrors, "errors_pct": MetricErrors,
	"rps": MetricQPS, "req/s": MetricQPS, "avg": MetricMean, "median": "p50"}

// Term is one bound of an objective: a latency (percentile, mean or max) at most Latency,
// or the success rate, error rate or QPS against Value; of the whole level, or of one
// endpoint of a scenario mix ("p99[login]<=300ms").
type Term struct {
	Metric   string        // "p50" .. "p99.99", "mean", "max", "success", "errors" or "qps"
	Endpoint string        // the endpoint of a mix it bounds; "": the whole level
	Latency  time.Duration // latency terms: the upper bound
	Value    float64       // success and errors: percent; qps: requests per second
}

// IsLatency reports whether t bounds a latency.
func (t Term) IsLatency() bool { return isLatencyMetric(t.Metric) }

// lower reports whether t's value is a lower bound (success, qps).
func (t Term) lower() bool { return t.Metric == MetricSuccess || t.Metric == MetricQPS }

// String writes the term as it is parsed: "p99<=500ms", "success>=99.9%", "qps>=1000",
// "p99[login]<=300ms".
func (t Term) String() string {
	name := t.Metric
	if t.Endpoint != "" {
		name += "[" + t.Endpoint + "]"
	}
	switch {
	case t.IsLatency():
		return name + "<=" + formatLatency(t.Latency)
	case t.Metric == MetricQPS:
		return name + ">=" + strconv.FormatFloat(t.Value, 'f', -1, 64)
	case t.lower():
		return name + ">=" + strconv.FormatFloat(t.Value, 'f', -1, 64) + "%"
	}
	return name + "<=" + strconv.FormatFloat(t.Value, 'f', -1, 64) + "%"
}

// formatLatency writes d so that time.ParseDuration reads it back: 500ms, 1.5s, 250µs.
func formatLatency(d time.Duration) string {
	switch {
	case d >= time.Second && d%time.Millisecond == 0:
		// One division (not Duration.Seconds, whose sum of parts prints 2.53s as 2.5300000000000002s).
		return strconv.FormatFloat(float64(d)/float64(time.Second), 'f', -1, 64) + "s"
	case d >= time.Millisecond && d%time.Microsecond == 0:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', -1, 64) + "ms"
	}
	return d.String()
}

// Objective is what a level must meet (an SLO), e.g. "p99<=500ms,success>=99.9%". Its zero
// value has no terms, so every level meets it. It is saved in run.json as its String form.
type Objective struct {
	Terms []Term
}

// ParseObjective reads an objective like "p99<=500ms,success>=99.9%" (also p50, p75, p90,
// p99.9, p99.99, mean, max, "errors<=0.1%" and "qps>=1000"; error_rate, rps and avg as
// aliases; "p99[NAME]<=300ms" for one endpoint of a mix). The empty string is no objective.
// It reports every problem at once.
func ParseObjective(s string) (Objective, error) {
	var o Objective
	var errs []error
	if strings.TrimSpace(s) == "" {
		return o, nil
	}
	parts := strings.Split(s, ",")
	for _, part := range parts {
		t, err := parseTerm(strings.TrimSpace(part))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		o.Terms = append(o.Terms, t)
	}
	if len(errs) > 0 && len(parts) == 1 {
		return Objective{}, errs[0] // the term's error quotes it, which is the whole objective
	}
	if len(errs) == 0 {
		if err := o.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Objective{}, fmt.Errorf("objective %q: %w", s, err)
	}
	return o, nil
}

func parseTerm(s string) (Term, error) {
	at := strings.IndexAny(s, "<>=")
	if at < 0 {
		return Term{}, fmt.Errorf("%q: want a bound like p99<=500ms or success>=99.9%%", s)
	}
	end := at
	for end < len(s) && strings.ContainsRune("<>=", rune(s[end])) {
		end++
	}
	metric := strings.ToLower(strings.TrimSpace(s[:at]))
	var endpoint string
	if open := strings.IndexByte(metric, '['); open >= 0 && strings.HasSuffix(metric, "]") {
		endpoint = strings.TrimSpace(strings.TrimSpace(s[:at])[open+1 : len(strings.TrimSpace(s[:at]))-1])
		metric = strings.TrimSpace(metric[:open])
		if endpoint == "" {
			return Term{}, fmt.Errorf("%q: empty endpoint name in []", s)
		}
	}
	if m, ok := metricAliases[metric]; ok {
		metric = m
	}
	op, value := s[at:end], strings.TrimSpace(s[end:])
	t := Term{Metric: metric, Endpoint: endpoint}
	want := "<="
	if t.lower() {
		want = ">="
	}
	known := t.Metric == MetricSuccess || t.Metric == MetricErrors || t.Metric == MetricQPS || isLatencyMetric(t.Metric)
	switch {
	case !known:
		return t, fmt.Errorf("%q: unknown metric %q (want %s, success, errors, qps, or for streams %s)", s, metric, strings.Join(latencyMetrics, ", "), strings.Join(streamMetrics, ", "))
	case op != want:
		return t, fmt.Errorf("%q: %s takes %s", s, metric, want)
	case t.IsLatency():
		d, err := time.ParseDuration(strings.Replace(value, "us", "µs", 1))
		if err != nil {
			return t, fmt.Errorf("%q: %q is not a duration like 500ms", s, value)
		}
		t.Latency = d
	case t.Metric == MetricQPS:
		v, err := parseNumber(value)
		if err != nil {
			return t, fmt.Errorf("%q: %q is not a number like 1000 or 2.5k", s, value)
		}
		t.Value = v
	default:
		v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(value, "%")), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return t, fmt.Errorf("%q: %q is not a percentage like 99.9%%", s, value)
		}
		t.Value = v
	}
	return t, nil
}

// parseNumber reads a number with an optional k or M suffix (x1000 each).
func parseNumber(s string) (float64, error) {
	mult := 1.0
	switch {
	case strings.HasSuffix(s, "k") || strings.HasSuffix(s, "K"):
		mult, s = 1e3, s[:len(s)-1]
	case strings.HasSuffix(s, "M"):
		mult, s = 1e6, s[:len(s)-1]
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, errors.New("not a number")
	}
	return v * mult, nil
}

func isLatencyMetric(m string) bool {
	for _, l := range streamMetrics {
		if m == l {
			return true
		}
	}
	for _, l := range latencyMetrics {
		if m == l {
			return true
		}
	}
	return false
}

// Validate reports every problem with the objective at once.
func (o Objective) Validate() error {
	var errs []error
	seen := map[string]bool{}
	for _, t := range o.Terms {
		key := t.Metric + "[" + t.Endpoint + "]"
		if seen[key] {
			errs = append(errs, fmt.Errorf("%s is bounded twice", strings.TrimSuffix(key, "[]")))
		}
		seen[key] = true
		switch {
		case t.IsLatency() && !isLatencyMetric(t.Metric):
			errs = append(errs, fmt.Errorf("unknown percentile %q (want one of %s)", t.Metric, strings.Join(latencyMetrics, ", ")))
		case t.IsLatency() && t.Latency <= 0:
			errs = append(errs, fmt.Errorf("%s bound must be positive, got %v", t.Metric, t.Latency))
		case t.Metric == MetricSuccess && (t.Value <= 0 || t.Value > 100):
			errs = append(errs, fmt.Errorf("success bound must be in (0, 100]%%, got %g%%", t.Value))
		case t.Metric == MetricErrors && (t.Value < 0 || t.Value >= 100):
			errs = append(errs, fmt.Errorf("errors bound must be in [0, 100)%%, got %g%%", t.Value))
		case t.Metric == MetricQPS && t.Value <= 0:
			errs = append(errs, fmt.Errorf("qps bound must be positive, got %g", t.Value))
		case !t.IsLatency() && t.Metric != MetricSuccess && t.Metric != MetricErrors && t.Metric != MetricQPS:
			errs = append(errs, fmt.Errorf("unknown metric %q", t.Metric))
		}
	}
	return errors.Join(errs...)
}

// String writes the objective as ParseObjective reads it.
func (o Objective) String() string {
	parts := make([]string, len(o.Terms))
	for i, t := range o.Terms {
		parts[i] = t.String()
	}
	return strings.Join(parts, ",")
}

// MarshalText writes the objective's String form (how run.json keeps it).
func (o Objective) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText parses an objective written by MarshalText.
func (o *Objective) UnmarshalText(b []byte) error {
	v, err := ParseObjective(string(b))
	if err != nil {
		return err
	}
	*o = v
	return nil
}

// Misses lists the terms p fails, each saying what was measured, e.g. "p99 812ms > 500ms";
// it is empty when p meets the objective.
func (o Objective) Misses(p Level) []string {
	var out []string
	for _, t := range o.Terms {
		if _, ok, why, _ := t.judge(p); !ok {
			out = append(out, why)
		}
	}
	return out
}

// judge measures t at p: the value as shown, whether it meets the bound, and if not why
// ("p99 812ms > 500ms") and by how much ("+312ms").
func (t Term) judge(p Level) (measured string, ok bool, why, by string) {
	name := t.Metric
	if t.Endpoint != "" {
		name += "[" + t.Endpoint + "]"
		var found bool
		for _, e := range p.Endpoints {
			if e.Label == t.Endpoint {
				p, found = e, true
				break
			}
		}
		if !found {
			return "", false, fmt.Sprintf("%s: no endpoint %q in this level", name, t.Endpoint), ""
		}
	}
	switch {
	case isStreamMetric(t.Metric) && p.Stream == nil:
		return "", false, fmt.Sprintf("%s: no streamed responses at this level", name), ""
	case t.IsLatency():
		v := p.Percentile(t.Metric)
		measured = formatLatency(round3(v))
		if v > t.Latency {
			return measured, false, fmt.Sprintf("%s %s > %s", name, measured, formatLatency(t.Latency)), "+" + formatLatency(round3(v-t.Latency))
		}
	case t.Metric == MetricSuccess:
		measured = pctNear(p.Success, t.Value) + "%"
		if p.Success < t.Value {
			return measured, false, fmt.Sprintf("%s %s < %s%%", name, measured, pct(t.Value)), strconv.FormatFloat(p.Success-t.Value, 'g', 3, 64) + " pt"
		}
	case t.Metric == MetricErrors:
		measured = pctNear(p.ErrorRate, t.Value) + "%"
		if p.ErrorRate > t.Value {
			return measured, false, fmt.Sprintf("%s %s > %s%%", name, measured, pct(t.Value)), "+" + strconv.FormatFloat(p.ErrorRate-t.Value, 'g', 3, 64) + " pt"
		}
	case t.Metric == MetricQPS:
		measured = fmt.Sprintf("%.0f req/s", p.QPS)
		if p.QPS < t.Value {
			return measured, false, fmt.Sprintf("%s %.0f < %s", name, p.QPS, strconv.FormatFloat(t.Value, 'f', -1, 64)), fmt.Sprintf("%.1f%%", 100*(p.QPS-t.Value)/t.Value)
		}
	}
	return measured, true, "", ""
}

// TermResult is one term of an objective judged at one level: a test case of a CI report.
type TermResult struct {
	Level    string `json:"level"`
	Term     string `json:"term"`
	Measured string `json:"measured,omitempty"` // as shown: "812ms", "99.95%", "950 req/s"; "" when nothing counts
	Pass     bool   `json:"pass"`
	Reason   string `json:"reason,omitempty"` // a failure: the value against the bound and by how much, or why nothing counts
}

// Check judges every term at level l. A level that measured no response, or whose numbers
// are the generator's own ceiling (generator-limited or generator-bound), fails every term
// with that reason: an objective never passes on no data, nor on what apiperf's machine
// could not send.
func (o Objective) Check(l Level) []TermResult {
	var nodata string
	switch {
	case l.Partial:
		nodata = "only QPS and mean latency are known of this level (read from a .dat file)"
	case l.Responses == 0:
		nodata = fmt.Sprintf("no responses in the measured window (%d attempts)", l.Attempts)
	case l.GeneratorLimited():
		nodata = "generator-limited: " + l.GeneratorLimit.String() + "; the numbers are apiperf's machine's ceiling, not the target's"
	case l.GeneratorBound:
		nodata = "generator-bound: apiperf's own threads were short of CPU; the numbers may understate the target"
	}
	out := make([]TermResult, 0, len(o.Terms))
	for _, t := range o.Terms {
		r := TermResult{Level: l.Label, Term: t.String()}
		var why, by string
		r.Measured, r.Pass, why, by = t.judge(l)
		switch {
		case nodata != "":
			r.Pass, r.Reason = false, nodata
			if l.Responses == 0 {
				r.Measured = ""
			}
		case !r.Pass && by != "":
			r.Reason = why + " (" + by + ")"
		case !r.Pass:
			r.Reason = why
		}
		out = append(out, r)
	}
	return out
}

// ObjectiveReport is an objective judged at every level of a command: what run.json keeps
// and every output shows.
type ObjectiveReport struct {
	Objective Objective    `json:"objective"`
	Results   []TermResult `json:"results"`
}

// CheckLevels judges o at every level.
func (o Objective) CheckLevels(levels []Level) *ObjectiveReport {
	r := &ObjectiveReport{Objective: o}
	for _, l := range levels {
		r.Results = append(r.Results, o.Check(l)...)
	}
	return r
}

// Failed lists the results that did not pass.
func (r *ObjectiveReport) Failed() []TermResult {
	if r == nil {
		return nil
	}
	var out []TermResult
	for _, t := range r.Results {
		if !t.Pass {
			out = append(out, t)
		}
	}
	return out
}

// Met reports whether p meets every term.
func (o Objective) Met(p Level) bool { return len(o.Misses(p)) == 0 }

// pct formats a percentage with up to three decimals and no trailing zeros.
func pct(v float64) string {
	return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64)
}

// pctNear formats v like pct, with more digits when it would print the same as bound.
func pctNear(v, bound float64) string {
	if s := pct(v); s != pct(bound) {
		return s
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// round3 rounds d to three significant digits for display: 15.01ms -> 15ms.
func round3(d time.Duration) time.Duration {
	unit := time.Duration(1)
	for d/unit >= 1000 {
		unit *= 10
	}
	return d.Round(unit)
}
