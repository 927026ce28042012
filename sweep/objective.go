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

// Metrics an objective can bound. Latency metrics are the percentiles a Level keeps.
const (
	MetricSuccess = "success" // success rate in percent, a lower bound
	MetricErrors  = "errors"  // failed attempts in percent, an upper bound
	MetricQPS     = "qps"     // completed requests per second, a lower bound
)

// latencyMetrics are the percentiles an objective may bound, as written.
var latencyMetrics = []string{"p50", "p75", "p90", "p99", "p99.9", "p99.99"}

// Term is one bound of an objective: a latency percentile at most Latency, or the success
// rate, error rate or QPS against Value.
type Term struct {
	Metric  string        // "p50" .. "p99.99", "success", "errors" or "qps"
	Latency time.Duration // latency terms: the upper bound
	Value   float64       // success and errors: percent; qps: requests per second
}

// IsLatency reports whether t bounds a latency percentile.
func (t Term) IsLatency() bool { return strings.HasPrefix(t.Metric, "p") }

// lower reports whether t's value is a lower bound (success, qps).
func (t Term) lower() bool { return t.Metric == MetricSuccess || t.Metric == MetricQPS }

// String writes the term as it is parsed: "p99<=500ms", "success>=99.9%", "qps>=1000".
func (t Term) String() string {
	switch {
	case t.IsLatency():
		return t.Metric + "<=" + formatLatency(t.Latency)
	case t.Metric == MetricQPS:
		return t.Metric + ">=" + strconv.FormatFloat(t.Value, 'f', -1, 64)
	case t.lower():
		return t.Metric + ">=" + strconv.FormatFloat(t.Value, 'f', -1, 64) + "%"
	}
	return t.Metric + "<=" + strconv.FormatFloat(t.Value, 'f', -1, 64) + "%"
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
// p99.9, p99.99, "errors<=0.1%" and "qps>=1000"). The empty string is no objective. It
// reports every problem at once.
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
	op, value := s[at:end], strings.TrimSpace(s[end:])
	t := Term{Metric: metric}
	want := "<="
	if t.lower() {
		want = ">="
	}
	known := t.Metric == MetricSuccess || t.Metric == MetricErrors || t.Metric == MetricQPS || isLatencyMetric(t.Metric)
	switch {
	case !known:
		return t, fmt.Errorf("%q: unknown metric %q (want %s, success, errors or qps)", s, metric, strings.Join(latencyMetrics, ", "))
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
		if seen[t.Metric] {
			errs = append(errs, fmt.Errorf("%s is bounded twice", t.Metric))
		}
		seen[t.Metric] = true
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
		switch {
		case t.IsLatency():
			if v := p.Percentile(t.Metric); v > t.Latency {
				out = append(out, fmt.Sprintf("%s %s > %s", t.Metric, formatLatency(round3(v)), formatLatency(t.Latency)))
			}
		case t.Metric == MetricSuccess:
			if p.Success < t.Value {
				out = append(out, fmt.Sprintf("success %s%% < %s%%", pctNear(p.Success, t.Value), pct(t.Value)))
			}
		case t.Metric == MetricErrors:
			if p.ErrorRate > t.Value {
				out = append(out, fmt.Sprintf("errors %s%% > %s%%", pctNear(p.ErrorRate, t.Value), pct(t.Value)))
			}
		case t.Metric == MetricQPS:
			if p.QPS < t.Value {
				out = append(out, fmt.Sprintf("qps %.0f < %s", p.QPS, strconv.FormatFloat(t.Value, 'f', -1, 64)))
			}
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
