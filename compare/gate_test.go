package compare

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/internal/golden"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/result"
)

// gateStep is a synthetic step: qps over one second, a p99 of p99ms, errPct of attempts failed.
func gateStep(label string, rep int, qps, p99ms, errPct float64) *measure.Step {
	const n = 10000
	h := measure.NewHistogram()
	h.RecordN(time.Duration(p99ms*0.5*1e6), n*98/100)
	h.RecordN(time.Duration(p99ms*1e6), n*2/100)
	fails := int64(math.Round(n * errPct / 100))
	return &measure.Step{
		Label: label, Rep: rep, Elapsed: measure.Duration(time.Duration(n / qps * 1e9)),
		Attempts: n, Requests: n, Successes: n - fails, Latency: h, AllAttempts: h,
	}
}

// gateRun makes a run of count repetitions per level; f gives each repetition's figures.
func gateRun(levels []string, count int, f func(level string, rep int) (qps, p99ms, errPct float64)) *result.Run {
	r := &result.Run{Version: result.Version, Kind: result.KindRun}
	for _, l := range levels {
		for i := range count {
			q, p, e := f(l, i)
			r.Steps = append(r.Steps, gateStep(l, i, q, p, e))
		}
	}
	return r
}

// noisy draws figures around a centre with about 2% noise (fixed seed: reproducible).
func noisy(seed uint64, qps, p99ms, errPct float64) func(string, int) (float64, float64, float64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	return func(string, int) (float64, float64, float64) {
		return qps * (1 + 0.02*rng.NormFloat64()), p99ms * (1 + 0.02*rng.NormFloat64()), errPct
	}
}

func TestGate(t *testing.T) {
	one := []string{"c=10"}
	tests := []struct {
		name       string
		base, cur  *result.Run
		cfg        GateConfig
		fail       []string // level/metric of every regression, e.g. "c=10/p99"
		untested   bool     // a warning says the samples are too small to test
		warnSubstr string
	}{
		// The same target twice: noise only, nothing fails.
		{"same", gateRun(one, 5, noisy(1, 10000, 2, 0)), gateRun(one, 5, noisy(2, 10000, 2, 0)), DefaultGateConfig, nil, false, ""},
		// p99 from 2 ms to 4 ms: significant and far over the 10% budget.
		{"p99 doubled", gateRun(one, 5, noisy(1, 10000, 2, 0)), gateRun(one, 5, noisy(2, 10000, 4, 0)), DefaultGateConfig, []string{"c=10/p99"}, false, ""},
		// p99 +6%, clearly significant (no overlap) but within the 10% budget: passes.
		{"within budget", gateRun(one, 5, func(string, int) (float64, float64, float64) { return 1e4, 2, 0 }),
			gateRun(one, 5, func(_ string, i int) (float64, float64, float64) { return 1e4, 2.12 + 0.01*float64(i), 0 }), DefaultGateConfig, nil, false, ""},
		// QPS drops 30% with a zero budget: fails on QPS only.
		{"qps drop", gateRun(one, 5, noisy(1, 10000, 2, 0)), gateRun(one, 5, noisy(2, 7000, 2, 0)), GateConfig{MaxP99Rise: 10, MaxErrorRate: 0.1}, []string{"c=10/qps"}, false, ""},
		// QPS better by 30%: an improvement never fails.
		{"qps up", gateRun(one, 5, noisy(1, 10000, 2, 0)), gateRun(one, 5, noisy(2, 13000, 2, 0)), DefaultGateConfig, nil, false, ""},
		// Errors from 0% to 2%: over the 0.1% ceiling and significantly worse.
		{"errors", gateRun(one, 5, noisy(1, 10000, 2, 0)), gateRun(one, 5, noisy(2, 10000, 2, 2)), DefaultGateConfig, []string{"c=10/error_rate"}, false, ""},
		// 2% errors on both sides: above the ceiling but not worse than the baseline.
		{"errors before too", gateRun(one, 5, noisy(1, 10000, 2, 2)), gateRun(one, 5, noisy(2, 10000, 2, 2)), DefaultGateConfig, nil, false, ""},
		// Single runs: no test can reach alpha, so the budget alone decides, and a warning says so.
		{"count 1", gateRun(one, 1, noisy(1, 10000, 2, 0)), gateRun(one, 1, noisy(2, 10000, 4, 0)), DefaultGateConfig, []string{"c=10/p99"}, true, "need --count 4"},
		// Two levels, only the second regresses; the baseline's extra level is reported.
		{"two levels", gateRun([]string{"c=10", "c=50", "c=99"}, 5, noisy(1, 10000, 2, 0)),
			gateRun([]string{"c=10", "c=50"}, 5, func(l string, i int) (float64, float64, float64) {
				if l == "c=50" {
					return 5000 + float64(i), 2, 0
				}
				return 10000 + float64(i), 2, 0
			}), DefaultGateConfig, []string{"c=50/qps"}, false, "baseline levels c=99"},
	}
	for _, tt := range tests {
		g, err := Gate(tt.base, tt.cur, tt.cfg)
		if err != nil {
			t.Errorf("%s: Gate: %v", tt.name, err)
			continue
		}
		var fails []string
		untested := false
		for _, c := range g.Checks {
			if c.Regression {
				fails = append(fails, c.Level+"/"+c.Metric)
			}
			untested = untested || !c.Tested
		}
		warn := strings.Join(g.Warnings, "\n")
		if strings.Join(fails, ",") != strings.Join(tt.fail, ",") || untested != tt.untested ||
			g.Pass() != (len(tt.fail) == 0) || !strings.Contains(warn, tt.warnSubstr) {
			t.Errorf("%s: Gate fails %v, untested %v, pass %v, warnings %q; want fails %v, untested %v, warning with %q",
				tt.name, fails, untested, g.Pass(), warn, tt.fail, tt.untested, tt.warnSubstr)
		}
	}
}

func TestGateBadInput(t *testing.T) {
	run := gateRun([]string{"c=10"}, 3, noisy(1, 1e4, 2, 0))
	tests := []struct {
		name      string
		base, cur *result.Run
		cfg       GateConfig
		want      string
	}{
		// The current run measured a level the baseline never did.
		{"other levels", run, gateRun([]string{"c=20"}, 3, noisy(1, 1e4, 2, 0)), DefaultGateConfig, "the baseline has no level c=20 (baseline levels: c=10; current: c=20)"},
		// Nothing measured on either side.
		{"empty current", run, &result.Run{}, DefaultGateConfig, "current run has no measured steps"},
		{"empty baseline", &result.Run{}, run, DefaultGateConfig, "baseline has no measured steps"},
		// Budgets out of range, all reported at once.
		{"bad config", run, run, GateConfig{MaxQPSDrop: -1, Alpha: 2}, "max QPS drop -1% is outside [0, 100]\nalpha 2 is outside (0, 1)"},
	}
	for _, tt := range tests {
		_, err := Gate(tt.base, tt.cur, tt.cfg)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Gate error %v; want one containing %q", tt.name, err, tt.want)
		}
	}
}

// TestGateFalseAlarmRate runs many comparisons of two samples drawn from the same
// distribution (recorded-style figures, seeded) and counts how often the gate fails. With
// zero budgets the rate of "significant and worse" is bounded by alpha (one tail of a
// two-sided test: about alpha/2); with the default budgets it must be near zero.
func TestGateFalseAlarmRate(t *testing.T) {
	const comparisons = 1000
	rng := rand.New(rand.NewPCG(42, 42))
	draw := func(string, int) (float64, float64, float64) {
		// A skewed, noisy distribution like real repetitions: qps +-3%, p99 with a long tail.
		return 10000 * (1 + 0.03*rng.NormFloat64()), 2 * math.Exp(0.05*rng.NormFloat64()), 0
	}
	strict := GateConfig{MaxErrorRate: 0.1}
	var strictFails, defaultFails, checks int
	for range comparisons {
		base, cur := gateRun([]string{"c=10"}, 5, draw), gateRun([]string{"c=10"}, 5, draw)
		for _, cfg := range []GateConfig{strict, DefaultGateConfig} {
			g, err := gate(base, cur, cfg, nil, false, false) // Gate without its power simulation (10 ms a call)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range g.Checks {
				if c.Metric == MetricErrorRate || !c.Regression {
					continue
				}
				if cfg == strict {
					strictFails++
				} else {
					defaultFails++
				}
			}
		}
		checks += 2 // qps and p99 per comparison
	}
	strictRate, defaultRate := float64(strictFails)/float64(checks), float64(defaultFails)/float64(checks)
	t.Logf("false alarms over %d identical comparisons (count 5 vs 5, alpha %.2f): zero budgets %.2f%% of checks, default budgets %.2f%%",
		comparisons, DefaultAlpha, 100*strictRate, 100*defaultRate)
	se := math.Sqrt(DefaultAlpha * (1 - DefaultAlpha) / float64(checks))
	if strictRate > DefaultAlpha+3*se {
		t.Errorf("zero-budget false-alarm rate %.4f; want <= alpha + 3 SE = %.4f", strictRate, DefaultAlpha+3*se)
	}
	if defaultRate > 0.005 {
		t.Errorf("default-budget false-alarm rate %.4f; want <= 0.005", defaultRate)
	}
	if strictFails == 0 {
		t.Errorf("zero budgets gave no false alarm at all in %d checks: the test cannot be working", checks)
	}
}

func TestGateMarkdownGolden(t *testing.T) {
	base := gateRun([]string{"c=10", "c=50"}, 5, noisy(1, 10000, 2, 0))
	cur := gateRun([]string{"c=10", "c=50"}, 5, func(l string, i int) (float64, float64, float64) {
		if l == "c=50" {
			return 9990 + float64(i), 4 + 0.01*float64(i), 0
		}
		return 10000 + float64(i), 2, 0
	})
	g, err := Gate(base, cur, DefaultGateConfig)
	if err != nil {
		t.Fatal(err)
	}
	g.Baseline, g.Current = "label=branch:main | latest", "runs/pr-`42`"
	var md, txt bytes.Buffer
	if err := g.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := g.Text(&txt); err != nil {
		t.Fatal(err)
	}
	js, err := g.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var back GateResult
	if err := json.Unmarshal(js, &back); err != nil || back.Regressions() != g.Regressions() || len(back.Checks) != len(g.Checks) {
		t.Errorf("JSON round trip: %v, %d regressions / %d checks; want %d / %d", err, back.Regressions(), len(back.Checks), g.Regressions(), len(g.Checks))
	}
	golden.Check(t, "gate.golden.md", md.Bytes())
	golden.Check(t, "gate.golden.txt", txt.Bytes())
}

// A tested change over budget that the repetitions cannot tell from noise is inconclusive:
// neither PASS nor FAIL in the text, the Markdown and the JSON.
func TestGateInconclusive(t *testing.T) {
	base := []float64{2, 2.4, 1.6, 2.2, 1.8}  // median 2 ms
	cur := []float64{2.4, 1.7, 2.9, 2.0, 2.6} // median 2.4 ms: +20%, overlapping
	p99 := func(v []float64) func(string, int) (float64, float64, float64) {
		return func(_ string, i int) (float64, float64, float64) { return 1e4, v[i], 0 }
	}
	g, err := Gate(gateRun([]string{"c=10"}, 5, p99(base)), gateRun([]string{"c=10"}, 5, p99(cur)), DefaultGateConfig)
	if err != nil {
		t.Fatal(err)
	}
	g.Baseline = "base.json"
	if g.Outcome() != OutcomeInconclusive || g.Pass() || g.Regressions() != 0 || g.Inconclusive() != 1 {
		t.Fatalf("Outcome() = %s, Pass() = %v, %d regressions, %d inconclusive; want inconclusive (1 check)",
			g.Outcome(), g.Pass(), g.Regressions(), g.Inconclusive())
	}
	var txt, md bytes.Buffer
	if err := g.Text(&txt); err != nil {
		t.Fatal(err)
	}
	if err := g.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	js, err := g.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(txt.String(), "gate: INCONCLUSIVE: 1 check over budget, not significant against base.json") ||
		!strings.Contains(txt.String(), "INCONCLUSIVE: over budget but not significant") || strings.Contains(txt.String(), "PASS") {
		t.Errorf("Text:\n%s\nwant the INCONCLUSIVE headline and check, no PASS", txt.String())
	}
	if !strings.HasPrefix(md.String(), "## apiperf gate: INCONCLUSIVE (1 check over budget, not significant)") {
		t.Errorf("Markdown starts %q, want the INCONCLUSIVE headline", strings.SplitN(md.String(), "\n", 2)[0])
	}
	var back struct {
		Outcome Outcome `json:"outcome"`
	}
	if err := json.Unmarshal(js, &back); err != nil || back.Outcome != OutcomeInconclusive {
		t.Errorf("JSON outcome %q (%v), want inconclusive", back.Outcome, err)
	}
}

// withStreams gives every step of r streams whose first message came at firstMS times
// (1 + 2% noise, fixed seed), p99 and all.
func withStreams(r *result.Run, seed uint64, firstMS float64) *result.Run {
	rng := rand.New(rand.NewPCG(seed, 9))
	for _, s := range r.Steps {
		f := measure.NewHistogram()
		f.RecordN(time.Duration(firstMS*(1+0.02*rng.NormFloat64())*1e6), 1000)
		s.Streams = &measure.Streams{Kind: "sse", Streams: 1000, Messages: 20000, First: f, Gap: measure.NewHistogram()}
	}
	return r
}

// The gate checks a streamed run's p99 time to first message (the first token) against the
// p99 budget: 100 ms -> 150 ms over five repetitions fails, its QPS and request p99 alike;
// the same time passes; runs that did not stream get no such check and no warning of it.
func TestGateFirstMessage(t *testing.T) {
	one := []string{"c=10"}
	base := withStreams(gateRun(one, 5, noisy(1, 1000, 20, 0)), 3, 100)
	slower := withStreams(gateRun(one, 5, noisy(2, 1000, 20, 0)), 4, 150)
	same := withStreams(gateRun(one, 5, noisy(5, 1000, 20, 0)), 6, 100)
	g, err := Gate(base, slower, DefaultGateConfig)
	if err != nil {
		t.Fatal(err)
	}
	var failed []string
	for _, c := range g.Checks {
		if c.Regression {
			failed = append(failed, c.Level+"/"+c.Metric)
		}
	}
	if strings.Join(failed, ",") != "c=10/"+MetricFirstP99 || g.Outcome() != OutcomeFail {
		t.Errorf("first message 100 -> 150 ms: regressions %v, outcome %s; want c=10/first_p99 only, fail", failed, g.Outcome())
	}
	if g, err := Gate(base, same, DefaultGateConfig); err != nil || g.Outcome() != OutcomePass {
		t.Errorf("first message unchanged: %v, outcome %v; want pass", err, g.Outcome())
	}
	plain := gateRun(one, 5, noisy(1, 1000, 20, 0))
	g, err = Gate(plain, gateRun(one, 5, noisy(2, 1000, 20, 0)), DefaultGateConfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range g.Checks {
		if c.Metric == MetricFirstP99 {
			t.Errorf("runs without streams got a %s check: %+v", MetricFirstP99, c)
		}
	}
	if w := strings.Join(g.Warnings, "; "); strings.Contains(w, MetricFirstP99) {
		t.Errorf("runs without streams warn of %s: %s", MetricFirstP99, w)
	}
}
