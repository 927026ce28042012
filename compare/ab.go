package compare

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/sample"
	"github.com/apiperf/apiperf/stats"
	"github.com/apiperf/apiperf/sweep"
)

// Metrics only `ab` has.
const (
	// MetricP50 is the median latency; `ab` reports it but does not gate on it.
	MetricP50 = "p50"
	// MetricCPU is the target's CPU time per request, in microseconds, when the steps have
	// it (measure.Step.TargetCPU): unlike QPS and latency it hardly moves when other
	// processes compete for the machine.
	MetricCPU = "cpu"
)

// DefaultPairs is how many A/B pairs `apiperf ab` runs at each level before it first
// judges them, and between judgments (looks).
const DefaultPairs = 10

// DefaultABWarmup is the unmeasured load before every step of `apiperf ab`.
const DefaultABWarmup = time.Second

// DefaultLooks is how many looks `apiperf ab` may take at a level: it adds pairs until the
// comparison is settled (ABSettled) or DefaultLooks x DefaultPairs pairs ran.
const DefaultLooks = 3

// ABCheck is the paired comparison of one metric at one level: B against A over pairs of
// steps run back to back (in ABBA order), so that drift of the machine hits both alike.
type ABCheck struct {
	Level  string `json:"level"`
	Metric string `json:"metric"` // MetricQPS, MetricP50, MetricP99 or MetricErrorRate
	Unit   string `json:"unit"`
	// A and B are the values of the pairs, pair i in A[i] and B[i].
	A []float64 `json:"a"`
	B []float64 `json:"b"`
	// AMedian and BMedian are the medians of each side.
	AMedian float64 `json:"a_median"`
	BMedian float64 `json:"b_median"`
	// Change is the Hodges-Lehmann estimate of the per-pair change of B against A: for QPS
	// and latencies in percent (the ratio B/A is 1 + Change/100), for the error rate in
	// percentage points (B - A).
	Change float64 `json:"change"`
	// CI is the confidence interval of Change, at the per-check confidence; nil when there
	// are too few pairs for one.
	CI *ConfidenceInterval `json:"ci,omitempty"`
	// P is the two-sided Wilcoxon signed-rank p-value of the per-pair changes.
	P float64 `json:"p"`
	// Gated says the metric has a budget (QPS, p99, error rate); p50 is reported only.
	Gated       bool `json:"gated"`
	Tested      bool `json:"tested"`      // enough pairs for P to reach the per-check alpha
	Significant bool `json:"significant"` // tested and P < the per-check alpha
	OverBudget  bool `json:"over_budget"` // the estimate is worse than the budget allows
	Regression  bool `json:"regression"`  // gated, over budget and significant
	// Inconclusive says the check is gated and over budget but not significant (or not
	// tested): neither a regression nor shown to be within budget.
	Inconclusive bool   `json:"inconclusive,omitempty"`
	Power        *Power `json:"power,omitempty"`
}

// ConfidenceInterval is a confidence interval [Lo, Hi] at Level (e.g. 0.983).
type ConfidenceInterval struct {
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	Level float64 `json:"level"`
}

// ABResult is the outcome of an interleaved A/B comparison: every check and the warnings.
type ABResult struct {
	Config GateConfig `json:"config"`
	A      string     `json:"a"` // what A and B were, e.g. their URLs
	B      string     `json:"b"`
	// CheckAlpha is the significance level of each gated check: Config's alpha divided by
	// the number of gated checks and by Looks (Bonferroni), so that Alpha bounds the chance
	// that any check of an A/A comparison is significant at any look.
	CheckAlpha float64 `json:"check_alpha"`
	// Looks is how many times a sequential run could judge each level (sweep.ABSequence);
	// 0 or 1: once, at the end.
	Looks    int       `json:"looks,omitempty"`
	Checks   []ABCheck `json:"checks"`
	Warnings []string  `json:"warnings,omitempty"`
	// Conditions is what both runs' conditions say (SetConditions); nil when not checked.
	Conditions *ConditionsCheck `json:"conditions,omitempty"`
	// StrictConditions refuses runs whose conditions warn: the outcome is then
	// OutcomeNotComparable (--strict-conditions).
	StrictConditions bool `json:"strict_conditions,omitempty"`
}

// Pass reports whether the outcome is a pass: no regression and nothing inconclusive.
func (r *ABResult) Pass() bool { return r.Outcome() == OutcomePass }

// Outcome is the decision: fail on a regression, else inconclusive when a check is over
// budget but not significant, else pass.
func (r *ABResult) Outcome() Outcome {
	return decide(r.Regressions(), r.Inconclusive(), r.Conditions.refuses(r.StrictConditions))
}

// Regressions counts the failing checks.
func (r *ABResult) Regressions() int {
	n := 0
	for _, c := range r.Checks {
		if c.Regression {
			n++
		}
	}
	return n
}

// Inconclusive counts the checks over budget but not significant.
func (r *ABResult) Inconclusive() int {
	n := 0
	for _, c := range r.Checks {
		if c.Inconclusive {
			n++
		}
	}
	return n
}

// JSON encodes the result as indented JSON, led by its outcome.
func (r *ABResult) JSON() ([]byte, error) {
	type plain ABResult // without methods
	return indentJSON("a/b result", struct {
		Outcome Outcome `json:"outcome"`
		*plain
	}{r.Outcome(), (*plain)(r)})
}

// abMetric is a metric of an A/B comparison and how its budget reads.
type abMetric struct {
	gateMetric
	ratio bool // compare logs of the values (a ratio), else differences
	gated bool
}

var abMetrics = []abMetric{
	{gateMetrics[0], true, true}, // QPS
	{gateMetric{MetricP50, "ms", func(s *measure.Step) float64 {
		if s.Latency == nil || s.Latency.Count() == 0 {
			return math.NaN()
		}
		return float64(s.Latency.Percentile(50)) / 1e6
	}, true, false}, true, false},
	{gateMetrics[1], true, true}, // p99
	{gateMetrics[2], false, true},
	{gateMetrics[3], true, false}, // first_p99, streams only: reported, not gated
	{gateMetric{MetricCPU, "µs", func(s *measure.Step) float64 {
		if s.TargetCPU <= 0 || s.Requests == 0 {
			return math.NaN()
		}
		return float64(s.TargetCPU.Duration().Microseconds()) / float64(s.Requests)
	}, true, false}, true, true},
}

// abMetricsFor returns the metrics an A/B comparison of steps checks, and whether the CPU
// per request is among them: it is only when every step measured the target's CPU, and a
// streams' metric only when every step streamed.
func abMetricsFor(steps ...[]*measure.Step) (metrics []abMetric, cpu bool) {
	cpu, streams := true, true
	for _, ss := range steps {
		for _, s := range ss {
			cpu = cpu && s != nil && s.TargetCPU > 0
			streams = streams && s != nil && s.Streams != nil
		}
	}
	return slices.DeleteFunc(slices.Clone(abMetrics), func(m abMetric) bool {
		return m.name == MetricCPU && !cpu || m.streams && !streams
	}), cpu
}

// ABMinPairs is the fewest pairs with which a signed-rank test of each of checks gated
// checks can reach significance at the family-wise alpha.
func ABMinPairs(alpha float64, checks int) int {
	if alpha <= 0 {
		alpha = DefaultAlpha
	}
	return stats.SignedRankMinN(alpha / float64(max(checks, 1)))
}

// ABChecks is how many gated checks an A/B comparison of levels levels makes, with or
// without the target's CPU per request.
func ABChecks(levels int, cpu bool) int {
	n := 0
	for _, m := range abMetrics {
		if m.gated && (cpu || m.name != MetricCPU) {
			n++
		}
	}
	return n * levels
}

// ABCheckAlpha is the significance level of each of checks gated checks, each made at up
// to looks looks, for a family-wise level alpha (Bonferroni: valid whatever the stopping
// rule, since a false alarm needs one of these tests to reject).
func ABCheckAlpha(alpha float64, checks, looks int) float64 {
	if alpha <= 0 {
		alpha = DefaultAlpha
	}
	return alpha / float64(max(checks, 1)*max(looks, 1))
}

// ABSequence is the sequential plan of an A/B comparison over levels levels (cpu: with the
// CPU check): a look every pairs pairs, at most maxPairs, each look judging at its share of
// cfg's alpha. checks is the gated checks of a look, looks how many times a level may be
// judged, need the fewest pairs that can show a significant change over them all.
func ABSequence(cfg GateConfig, levels int, cpu bool, pairs, maxPairs int) (seq sweep.ABSequence, checks, looks, need int) {
	checks = ABChecks(levels, cpu)
	looks = (maxPairs + pairs - 1) / max(pairs, 1)
	seq = sweep.ABSequence{Every: pairs, Max: maxPairs}
	if looks > 1 {
		alpha := ABCheckAlpha(cfg.Alpha, checks, looks)
		seq.Decided = func(_ int, a, b []*measure.Step) bool { return ABSettled(cfg, alpha, a, b) }
	}
	return seq, checks, looks, ABMinPairs(cfg.Alpha, checks*looks)
}

// ABSettled reports whether the pairs (a[i], b[i]) of one level, each check at level
// alpha, settle the comparison so that a sequential run needs no more pairs: some gated
// check is a regression, or the confidence interval of every primary check lies within its
// budget. The primary check is the target's CPU per request when the steps have it (it
// moves least with the machine's contention), else QPS and p99.
func ABSettled(cfg GateConfig, alpha float64, a, b []*measure.Step) bool {
	metrics, cpu := abMetricsFor(a, b)
	var checks []*ABCheck
	for _, m := range metrics {
		c, _ := m.check(cfg, alpha, "", a, b)
		if c == nil {
			continue
		}
		if c.Regression {
			return true
		}
		checks = append(checks, c)
	}
	primary := 0
	for _, c := range checks {
		if (cpu && c.Metric != MetricCPU) || (!cpu && c.Metric != MetricQPS && c.Metric != MetricP99) {
			continue
		}
		primary++
		if !c.Tested || c.CI == nil || !withinBudget(cfg, c) {
			return false
		}
	}
	return primary > 0
}

// withinBudget reports whether c's whole confidence interval lies inside its budget.
func withinBudget(cfg GateConfig, c *ABCheck) bool {
	switch c.Metric {
	case MetricQPS:
		return -c.CI.Lo <= cfg.MaxQPSDrop
	case MetricP99:
		return c.CI.Hi <= cfg.MaxP99Rise
	case MetricCPU:
		return c.CI.Hi <= cfg.MaxCPURise
	}
	return false
}

// AB compares run b against run a pair by pair: steps with the same label and repetition
// number form a pair. It fails with an error when no pair can be formed.
func AB(a, b *result.Run, cfg GateConfig) (*ABResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("gate config: %w", err)
	}
	al, bl := gateLevels(a), gateLevels(b)
	res := &ABResult{Config: cfg}
	res.Config.Alpha = cfg.alpha()
	type pairs struct {
		label string
		a, b  []*measure.Step
	}
	var levels []pairs
	for _, l := range al {
		other := gateFind(bl, l.label)
		if other == nil {
			res.Warnings = append(res.Warnings, fmt.Sprintf("level %s was run on A only, not compared", l.label))
			continue
		}
		p := pairs{label: l.label}
		unpaired := 0
		for _, sa := range l.steps {
			i := slices.IndexFunc(other.steps, func(sb *measure.Step) bool { return sb.Rep == sa.Rep })
			if i < 0 {
				unpaired++
				continue
			}
			p.a, p.b = append(p.a, sa), append(p.b, other.steps[i])
		}
		if unpaired += len(other.steps) - len(p.b); unpaired > 0 {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %d step(s) without a partner, not compared", l.label, unpaired))
		}
		if len(p.a) > 0 {
			levels = append(levels, p)
		}
	}
	if len(levels) == 0 {
		return nil, errors.New("no pairs to compare: A and B share no level and repetition")
	}
	var all [][]*measure.Step
	for _, l := range levels {
		all = append(all, l.a, l.b)
	}
	metrics, cpu := abMetricsFor(all...)
	gated := ABChecks(len(levels), cpu)
	if a.AB != nil && a.AB.Looks > 1 {
		res.Looks = a.AB.Looks
	}
	res.CheckAlpha = ABCheckAlpha(res.Config.Alpha, gated, res.Looks)
	untested := false
	for _, l := range levels {
		for _, m := range metrics {
			c, warn := m.check(res.Config, res.CheckAlpha, l.label, l.a, l.b)
			if warn != "" {
				res.Warnings = append(res.Warnings, warn)
			}
			if c == nil {
				continue
			}
			untested = untested || (c.Gated && !c.Tested)
			res.Checks = append(res.Checks, *c)
		}
	}
	if untested {
		res.Warnings = append(res.Warnings, fmt.Sprintf("too few pairs for a statistical test at alpha %g over %d checks (need --count %d or more): "+
			"checks marked \"not tested\" cannot fail, and this comparison shows nothing", res.Config.Alpha, gated, ABMinPairs(res.Config.Alpha, gated)))
	}
	return res, nil
}

// check compares one metric over the pairs (a[i], b[i]); nil with a warning when no pair
// has values on both sides.
func (m abMetric) check(cfg GateConfig, alpha float64, label string, a, b []*measure.Step) (*ABCheck, string) {
	c := &ABCheck{Level: label, Metric: m.name, Unit: m.unit, Gated: m.gated, P: 1}
	var d []float64
	dropped := 0
	for i := range a {
		x, y := m.value(a[i]), m.value(b[i])
		if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) || (m.ratio && !(x > 0 && y > 0)) {
			dropped++
			continue
		}
		c.A, c.B = append(c.A, x), append(c.B, y)
		if m.ratio {
			d = append(d, math.Log(y/x))
		} else {
			d = append(d, y-x)
		}
	}
	warn := ""
	if dropped > 0 {
		warn = fmt.Sprintf("%s %s: %d pair(s) without a value on both sides, not compared", label, m.name, dropped)
	}
	if len(d) == 0 {
		return nil, warn
	}
	c.AMedian, c.BMedian = sample.Median(c.A), sample.Median(c.B)
	sr, _ := stats.SignedRankTest(d)
	c.P = sr.P
	c.Tested = stats.SignedRankMinP(len(d)) < alpha
	c.Significant = c.Tested && c.P < alpha
	hl := stats.HodgesLehmann(d, 1-alpha)
	unit := func(x float64) float64 {
		if m.ratio {
			return stats.LogToPercent(x)
		}
		return x
	}
	c.Change = unit(hl.Estimate)
	if !math.IsInf(hl.Lo, 0) {
		c.CI = &ConfidenceInterval{Lo: unit(hl.Lo), Hi: unit(hl.Hi), Level: hl.Level}
	}
	worse := 1
	if !m.higherBad {
		worse = -1
	}
	var overBudget func(est float64) bool // est in log units or points
	switch m.name {
	case MetricQPS:
		overBudget = func(est float64) bool { return -stats.LogToPercent(est) > cfg.MaxQPSDrop }
	case MetricP99:
		overBudget = func(est float64) bool { return stats.LogToPercent(est) > cfg.MaxP99Rise }
	case MetricCPU:
		overBudget = func(est float64) bool { return stats.LogToPercent(est) > cfg.MaxCPURise }
	case MetricErrorRate:
		overBudget = func(est float64) bool { return est > 0 && c.BMedian > cfg.MaxErrorRate }
	}
	if m.gated {
		c.OverBudget = stats.SignOf(hl.Estimate) == worse && overBudget(hl.Estimate)
		c.Regression = c.OverBudget && c.Significant // untested: a pair of noisy numbers proves nothing
		c.Inconclusive = c.OverBudget && !c.Significant
	}
	det, fail, detOK, failOK := stats.PairedPower(d, alpha, worse, overBudget)
	_, spread := stats.Deviations(d, hl.Estimate)
	c.Power = &Power{Samples: len(d), Noise: unit(spread), Detect: ptr(unit(det), detOK)}
	if m.gated {
		if !m.higherBad {
			fail = -fail // a drop, as a positive percentage
			c.Power.Fail = ptr(-unit(fail), failOK)
		} else {
			c.Power.Fail = ptr(unit(fail), failOK)
		}
	}
	return c, warn
}
