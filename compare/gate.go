package compare

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/sample"
	"github.com/apiperf/apiperf/stats"
	"github.com/apiperf/apiperf/sweep"
)

// Default gate budgets, in percent.
const (
	// DefaultAlpha is the significance level of the gate's tests, as in benchstat.
	DefaultAlpha        = 0.05
	DefaultMaxQPSDrop   = 5.0 // QPS may drop by up to 5%
	DefaultMaxP99Rise   = 10.0
	DefaultMaxErrorRate = 0.1 // error rate ceiling: 0.1% of attempts
	DefaultMaxCPURise   = 5.0 // the target's CPU time per request (ab with --pid-a/--pid-b)
)

// Gate metrics.
const (
	MetricQPS       = "qps"
	MetricP99       = "p99"
	MetricErrorRate = "error_rate"
	// MetricFirstP99 is the p99 time to a stream's first message (gRPC server streams, SSE:
	// the first token), checked against MaxP99Rise when both runs streamed.
	MetricFirstP99 = "first_p99"
)

// GateConfig is a CI gate's budgets and significance level. A change fails the gate only
// when it is both statistically significant (Mann-Whitney U, p < Alpha) and over budget.
// The zero value has zero budgets (any significant change for the worse fails) and the
// default alpha.
type GateConfig struct {
	// MaxQPSDrop is the allowed drop of median QPS, in percent of the baseline's.
	MaxQPSDrop float64 `json:"max_qps_drop_pct"`
	// MaxP99Rise is the allowed rise of median p99 latency, in percent of the baseline's.
	MaxP99Rise float64 `json:"max_p99_rise_pct"`
	// MaxErrorRate is the error-rate ceiling in percent of attempts: exceeding it fails
	// when the current run is also worse than the baseline.
	MaxErrorRate float64 `json:"max_error_rate_pct"`
	// MaxCPURise is the allowed rise of the target's CPU time per request, in percent; only
	// `ab` measures it (--pid-a, --pid-b).
	MaxCPURise float64 `json:"max_cpu_rise_pct,omitempty"`
	// Alpha is the significance level; 0 means DefaultAlpha.
	Alpha float64 `json:"alpha"`
}

// DefaultGateConfig is the gate of `apiperf gate` without budget flags.
var DefaultGateConfig = GateConfig{
	MaxQPSDrop: DefaultMaxQPSDrop, MaxP99Rise: DefaultMaxP99Rise,
	MaxErrorRate: DefaultMaxErrorRate, MaxCPURise: DefaultMaxCPURise, Alpha: DefaultAlpha,
}

// Validate returns every problem with the config at once.
func (c GateConfig) Validate() error {
	var errs []error
	check := func(name string, v, hi float64) {
		if math.IsNaN(v) || v < 0 || v > hi {
			errs = append(errs, fmt.Errorf("%s %v%% is outside [0, %v]", name, v, hi))
		}
	}
	check("max QPS drop", c.MaxQPSDrop, 100)
	check("max p99 rise", c.MaxP99Rise, math.MaxFloat64)
	check("max error rate", c.MaxErrorRate, 100)
	check("max CPU rise", c.MaxCPURise, math.MaxFloat64)
	if math.IsNaN(c.Alpha) || c.Alpha < 0 || c.Alpha >= 1 {
		errs = append(errs, fmt.Errorf("alpha %v is outside (0, 1)", c.Alpha))
	}
	return errors.Join(errs...)
}

// String prints the budgets, e.g. "QPS drop <= 5%, p99 rise <= 10%, error rate <= 0.1%, alpha 0.05".
func (c GateConfig) String() string {
	return fmt.Sprintf("QPS drop <= %g%%, p99 rise <= %g%%, error rate <= %g%%, alpha %g",
		c.MaxQPSDrop, c.MaxP99Rise, c.MaxErrorRate, c.alpha())
}

func (c GateConfig) alpha() float64 {
	if c.Alpha == 0 {
		return DefaultAlpha
	}
	return c.Alpha
}

// GateCheck is the decision on one metric at one level.
type GateCheck struct {
	Level  string `json:"level"`  // step label, e.g. "c=50"
	Metric string `json:"metric"` // MetricQPS, MetricP99, MetricErrorRate or MetricFirstP99
	Unit   string `json:"unit"`   // "req/s", "ms", "%"
	// Baseline and Current are the samples: one value per repetition.
	Baseline []float64 `json:"baseline"`
	Current  []float64 `json:"current"`
	// BaselineMedian and CurrentMedian are the samples' medians.
	BaselineMedian float64 `json:"baseline_median"`
	CurrentMedian  float64 `json:"current_median"`
	// Change is the change of the medians: in percent of the baseline for QPS and p99, in
	// percentage points for the error rate.
	Change float64 `json:"change"`
	// P is the two-sided Mann-Whitney p-value.
	P float64 `json:"p"`
	// Tested says the samples are large enough for P to reach alpha at all; when false the
	// decision rests on the budget alone ("not statistically tested").
	Tested      bool `json:"tested"`
	Significant bool `json:"significant"` // tested and P < alpha
	OverBudget  bool `json:"over_budget"` // worse than the baseline by more than the budget
	// NoiseBand is the run-to-run noise learned from the baseline's history (nil: none
	// learned); BeyondNoise says the change exceeds it (true when there is none).
	NoiseBand   *NoiseBand `json:"noise_band,omitempty"`
	BeyondNoise bool       `json:"beyond_noise"`
	Regression  bool       `json:"regression"` // over budget, beyond the noise and (significant or untested)
	// Inconclusive says the check is over budget and beyond the noise but, tested, not
	// significant: neither a regression nor shown to be within budget.
	Inconclusive bool   `json:"inconclusive,omitempty"`
	Power        *Power `json:"power,omitempty"`
}

// GateResult is the outcome of a gate: every check and the warnings.
type GateResult struct {
	Config   GateConfig  `json:"config"`
	Baseline string      `json:"baseline"` // what the baseline was, e.g. a path or a history query
	Current  string      `json:"current"`
	Checks   []GateCheck `json:"checks"`
	Warnings []string    `json:"warnings,omitempty"`
	// Conditions is what both runs' conditions say (SetConditions); nil when not checked.
	Conditions *ConditionsCheck `json:"conditions,omitempty"`
	// StrictConditions refuses runs whose conditions warn: the outcome is then
	// OutcomeNotComparable (--strict-conditions).
	StrictConditions bool `json:"strict_conditions,omitempty"`
}

// Pass reports whether the outcome is a pass: no regression and nothing inconclusive.
func (g *GateResult) Pass() bool { return g.Outcome() == OutcomePass }

// Outcome is the decision: fail on a regression, else inconclusive when a check is over
// budget but not significant, else pass.
func (g *GateResult) Outcome() Outcome {
	return decide(g.Regressions(), g.Inconclusive(), g.Conditions.refuses(g.StrictConditions))
}

// Inconclusive counts the checks over budget but not significant.
func (g *GateResult) Inconclusive() int {
	n := 0
	for _, c := range g.Checks {
		if c.Inconclusive {
			n++
		}
	}
	return n
}

// Regressions counts the failing checks.
func (g *GateResult) Regressions() int {
	n := 0
	for _, c := range g.Checks {
		if c.Regression {
			n++
		}
	}
	return n
}

// JSON encodes the result as indented JSON, led by its outcome.
func (g *GateResult) JSON() ([]byte, error) {
	type plain GateResult // without methods
	return indentJSON("gate result", struct {
		Outcome Outcome `json:"outcome"`
		*plain
	}{g.Outcome(), (*plain)(g)})
}

// Gate compares current with baseline level by level (steps with the same label; their
// repetitions are the samples) on QPS, p99 latency and error rate. It fails with an error
// when the runs cannot be compared: no steps, or a current level the baseline lacks.
func Gate(baseline, current *result.Run, cfg GateConfig) (*GateResult, error) {
	return gate(baseline, current, cfg, nil, false, true)
}

// GateHistory is Gate against a baseline taken from the history, whose earlier runs
// (history, oldest first) teach the run-to-run noise (LearnNoise): a change must exceed
// both the budget and that noise band to fail. Too little history is a warning, and the
// budgets alone decide.
func GateHistory(baseline, current *result.Run, cfg GateConfig, history []*result.Run) (*GateResult, error) {
	return gate(baseline, current, cfg, history, true, true)
}

// gate is Gate; learn says to learn noise from history, power to simulate each check's power.
func gate(baseline, current *result.Run, cfg GateConfig, history []*result.Run, learn, power bool) (*GateResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("gate config: %w", err)
	}
	bl, cl := gateLevels(baseline), gateLevels(current)
	if len(cl) == 0 {
		return nil, errors.New("the current run has no measured steps")
	}
	if len(bl) == 0 {
		return nil, errors.New("the baseline has no measured steps")
	}
	g := &GateResult{Config: cfg}
	g.Config.Alpha = cfg.alpha()
	var missing, extra []string
	for _, l := range cl {
		if gateFind(bl, l.label) == nil {
			missing = append(missing, l.label)
		}
	}
	for _, l := range bl {
		if gateFind(cl, l.label) == nil {
			extra = append(extra, l.label)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("the baseline has no level %s (baseline levels: %s; current: %s): compare runs of the same plan",
			strings.Join(missing, ", "), gateLabels(bl), gateLabels(cl))
	}
	if len(extra) > 0 {
		g.Warnings = append(g.Warnings, fmt.Sprintf("baseline levels %s were not measured in the current run and are not checked", strings.Join(extra, ", ")))
	}
	var bands []NoiseBand
	if learn {
		var warns []string
		bands, warns = LearnNoise(history, current)
		g.Warnings = append(g.Warnings, warns...)
	}
	untested := false
	for _, c := range cl {
		b := gateFind(bl, c.label)
		for _, m := range gateMetrics {
			chk := m.check(cfg, c.label, b.steps, c.steps, findBand(bands, c.label, m.name))
			if power && len(chk.Baseline) > 0 && len(chk.Current) > 0 {
				chk.Power = m.power(cfg, chk, cfg.alpha())
			}
			if m.streams && len(chk.Baseline) == 0 && len(chk.Current) == 0 {
				continue // neither run streamed
			}
			if len(chk.Baseline) == 0 || len(chk.Current) == 0 {
				g.Warnings = append(g.Warnings, fmt.Sprintf("%s %s: no values (no complete responses), not checked", c.label, m.name))
				continue
			}
			untested = untested || !chk.Tested
			g.Checks = append(g.Checks, chk)
		}
	}
	if untested {
		need := stats.MannWhitneyMinN(g.Config.Alpha)
		g.Warnings = append(g.Warnings, fmt.Sprintf("too few repetitions for a statistical test at alpha %g (need --count %d or more on both sides): "+
			"checks marked \"not tested\" fail on the budget alone", g.Config.Alpha, need))
	}
	return g, nil
}

type gateLevel struct {
	label string
	steps []*measure.Step
}

// gateLevels groups a run's steps into its levels as every report does (sweep.Levels):
// the repetitions of each level, in ascending order of level.
func gateLevels(r *result.Run) []gateLevel {
	if r == nil {
		return nil
	}
	var out []gateLevel
	for _, l := range sweep.Levels(r.Steps) {
		g := gateLevel{label: l.Label}
		for _, j := range l.Steps {
			g.steps = append(g.steps, r.Steps[j])
		}
		out = append(out, g)
	}
	return out
}

func gateFind(ls []gateLevel, label string) *gateLevel {
	for i := range ls {
		if ls[i].label == label {
			return &ls[i]
		}
	}
	return nil
}

func gateLabels(ls []gateLevel) string {
	s := make([]string, len(ls))
	for i, l := range ls {
		s[i] = l.label
	}
	return strings.Join(s, ", ")
}

// gateMetric is one checked metric: how to read it from a step and which way is worse;
// streams: a streams' metric, not checked (nor warned of) when neither run streamed.
type gateMetric struct {
	name, unit string
	value      func(s *measure.Step) float64 // NaN when the step has none
	higherBad  bool
	streams    bool
}

var gateMetrics = []gateMetric{
	{MetricQPS, "req/s", func(s *measure.Step) float64 { return s.QPS() }, false, false},
	{MetricP99, "ms", func(s *measure.Step) float64 {
		if s.Latency == nil || s.Latency.Count() == 0 {
			return math.NaN()
		}
		return float64(s.Latency.Percentile(99)) / 1e6
	}, true, false},
	{MetricErrorRate, "%", func(s *measure.Step) float64 {
		if s.Attempts == 0 {
			return math.NaN()
		}
		return 100 - s.SuccessRate()
	}, true, false},
	{MetricFirstP99, "ms", func(s *measure.Step) float64 {
		if s.Streams == nil || s.Streams.First == nil || s.Streams.First.Count() == 0 {
			return math.NaN()
		}
		return float64(s.Streams.First.Percentile(99)) / 1e6
	}, true, true},
}

// GateSamples returns the values of metric (MetricQPS, MetricP99, MetricErrorRate,
// MetricFirstP99) of steps,
// one per step that has it.
func GateSamples(metric string, steps []*measure.Step) []float64 {
	for _, m := range gateMetrics {
		if m.name == metric {
			return m.samples(steps)
		}
	}
	return nil
}

// samples is the sample of the metric over steps (sample.Of: ascending, steps without it
// left out).
func (m gateMetric) samples(steps []*measure.Step) []float64 {
	v := make([]float64, len(steps))
	for i, s := range steps {
		v[i] = m.value(s)
	}
	return sample.Of(v).Values
}

func (m gateMetric) check(cfg GateConfig, label string, base, cur []*measure.Step, band *NoiseBand) GateCheck {
	c := GateCheck{Level: label, Metric: m.name, Unit: m.unit, Baseline: m.samples(base), Current: m.samples(cur), P: 1}
	if len(c.Baseline) == 0 || len(c.Current) == 0 {
		return c
	}
	c.BaselineMedian, c.CurrentMedian = sample.Median(c.Baseline), sample.Median(c.Current)
	alpha := cfg.alpha()
	if mw, err := stats.MannWhitneyTest(c.Baseline, c.Current); err == nil {
		c.P = mw.P
	}
	c.Tested = stats.MinP(len(c.Baseline), len(c.Current)) < alpha
	c.Significant = c.Tested && c.P < alpha
	worse := c.CurrentMedian > c.BaselineMedian
	if !m.higherBad {
		worse = c.CurrentMedian < c.BaselineMedian
	}
	switch m.name {
	case MetricErrorRate:
		c.Change = c.CurrentMedian - c.BaselineMedian
		c.OverBudget = worse && c.CurrentMedian > cfg.MaxErrorRate
	case MetricQPS:
		c.Change = stats.PercentChange(c.BaselineMedian, c.CurrentMedian)
		c.OverBudget = worse && -c.Change > cfg.MaxQPSDrop
	case MetricP99, MetricFirstP99:
		c.Change = stats.PercentChange(c.BaselineMedian, c.CurrentMedian)
		c.OverBudget = worse && c.Change > cfg.MaxP99Rise
	}
	c.NoiseBand, c.BeyondNoise = band, band == nil || math.Abs(c.Change) > band.Band
	c.Regression = c.OverBudget && c.BeyondNoise && (c.Significant || !c.Tested)
	c.Inconclusive = c.OverBudget && c.BeyondNoise && !c.Regression
	return c
}

// power simulates this check's test at the noise of its samples (see unpairedPower).
func (m gateMetric) power(cfg GateConfig, c GateCheck, alpha float64) *Power {
	base, cur := c.Baseline, c.Current
	ratio := m.name != MetricErrorRate
	unit := func(x float64) float64 { return x }
	if ratio {
		if base, cur = stats.LogValues(base), stats.LogValues(cur); base == nil || cur == nil {
			return nil
		}
		unit = stats.LogToPercent
	}
	worse := 1
	if !m.higherBad {
		worse = -1
	}
	band := 0.0
	if c.NoiseBand != nil {
		band = c.NoiseBand.Band
	}
	fail := func(change float64) bool { // change of the medians, in log units or points
		pct := unit(change)
		switch m.name {
		case MetricQPS:
			return -pct > cfg.MaxQPSDrop && -pct > band
		case MetricP99, MetricFirstP99:
			return pct > cfg.MaxP99Rise && pct > band
		}
		return pct > band && c.BaselineMedian+pct > cfg.MaxErrorRate
	}
	det, failAt, detOK, failOK := stats.UnpairedPower(base, cur, alpha, worse, fail)
	_, sb := stats.Deviations(base, sample.Median(base))
	_, sc := stats.Deviations(cur, sample.Median(cur))
	p := &Power{Samples: min(len(base), len(cur)), Noise: unit(math.Max(sb, sc)), Detect: ptr(unit(det), detOK)}
	if worse < 0 {
		p.Fail = ptr(-unit(-failAt), failOK)
	} else {
		p.Fail = ptr(unit(failAt), failOK)
	}
	return p
}
