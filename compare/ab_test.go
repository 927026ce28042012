package compare

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apiperf/apiperf/internal/golden"
	"github.com/apiperf/apiperf/result"
)

// abRuns makes A and B runs of n pairs at one level: pair i of both sides shares a drift
// factor (the machine), each step gets its own noise, and B is scaled by qpsB and p99B.
func abRuns(n int, drift, noise, qpsB, p99B float64, seed uint64) (*result.Run, *result.Run) {
	rng := rand.New(rand.NewPCG(seed, 11))
	a := &result.Run{Version: result.Version, Kind: result.KindRun}
	b := &result.Run{Version: result.Version, Kind: result.KindRun}
	for i := range n {
		f := 1 + drift*rng.NormFloat64()
		na, nb := 1+noise*rng.NormFloat64(), 1+noise*rng.NormFloat64()
		a.Steps = append(a.Steps, gateStep("c=4", i, 10000*f*na, 2/f/na, 0))
		b.Steps = append(b.Steps, gateStep("c=4", i, 10000*f*nb*qpsB, 2/f/nb*p99B, 0))
	}
	return a, b
}

func abCheck(t *testing.T, r *ABResult, metric string) ABCheck {
	t.Helper()
	for _, c := range r.Checks {
		if c.Metric == metric {
			return c
		}
	}
	t.Fatalf("no %s check in %+v", metric, r.Checks)
	return ABCheck{}
}

func TestAB(t *testing.T) {
	tests := []struct {
		name       string
		n          int
		drift      float64
		qpsB, p99B float64
		fail       []string // metrics that must fail; every other must pass
		untested   bool
		outcome    Outcome
	}{
		// Identical sides under 15% drift between pairs: the pairing cancels it, nothing fails.
		{"A/A with drift", 10, 0.15, 1, 1, nil, false, OutcomePass},
		// B 15% slower and its p99 15% higher: both fail, with 10 pairs and 2% noise.
		{"B 15% slower", 10, 0.15, 0.85, 1.15, []string{MetricQPS, MetricP99}, false, OutcomeFail},
		// B 3% slower: significant but within the 5% budget, passes.
		{"B 3% slower", 10, 0.15, 0.97, 1, nil, false, OutcomePass},
		// Three pairs cannot reach the per-check alpha: nothing fails, a warning says so, and
		// B's 15% drop over budget is inconclusive, not a pass.
		{"too few pairs", 3, 0, 0.85, 1, nil, true, OutcomeInconclusive},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := abRuns(tt.n, tt.drift, 0.02, tt.qpsB, tt.p99B, 1)
			r, err := AB(a, b, DefaultGateConfig)
			if err != nil {
				t.Fatal(err)
			}
			if want := DefaultAlpha / 3; math.Abs(r.CheckAlpha-want) > 1e-12 {
				t.Errorf("CheckAlpha = %v, want %v (alpha over 3 gated checks)", r.CheckAlpha, want)
			}
			for _, c := range r.Checks {
				want := strings.Contains(strings.Join(tt.fail, ","), c.Metric) && c.Metric != ""
				if c.Regression != want {
					t.Errorf("%s: regression %v (change %.2f, p %.4f), want %v", c.Metric, c.Regression, c.Change, c.P, want)
				}
				if c.Gated && c.Tested == tt.untested {
					t.Errorf("%s: tested %v, want %v", c.Metric, c.Tested, !tt.untested)
				}
			}
			if warned := strings.Contains(strings.Join(r.Warnings, "\n"), "too few pairs"); warned != tt.untested {
				t.Errorf("warnings %q: 'too few pairs' there %v, want %v", r.Warnings, warned, tt.untested)
			}
			if r.Outcome() != tt.outcome || r.Pass() != (tt.outcome == OutcomePass) {
				t.Errorf("Outcome() = %s, Pass() = %v with %d regressions, %d inconclusive; want %s",
					r.Outcome(), r.Pass(), r.Regressions(), r.Inconclusive(), tt.outcome)
			}
		})
	}
}

// The estimate and interval of a clean 10% drop: ratio 0.9 inside a tight interval.
func TestABEstimate(t *testing.T) {
	a, b := abRuns(10, 0.1, 0.01, 0.9, 1, 3)
	r, err := AB(a, b, DefaultGateConfig)
	if err != nil {
		t.Fatal(err)
	}
	c := abCheck(t, r, MetricQPS)
	if math.Abs(c.Change+10) > 1.5 || c.CI == nil || c.CI.Lo > c.Change || c.CI.Hi < c.Change || c.CI.Hi > -7 || c.CI.Lo < -13 {
		t.Errorf("QPS change %.2f%% CI %+v; want about -10%% inside an interval within [-13%%, -7%%]", c.Change, c.CI)
	}
	if c.CI.Level < 1-r.CheckAlpha {
		t.Errorf("CI level %v below the per-check confidence %v", c.CI.Level, 1-r.CheckAlpha)
	}
}

// The power statement: with 2% pair noise and 10 pairs, a change of a few percent is
// detectable, and failing the 5% QPS budget takes more than 5%; three pairs detect nothing.
func TestABPower(t *testing.T) {
	a, b := abRuns(10, 0.1, 0.02, 1, 1, 5)
	r, err := AB(a, b, DefaultGateConfig)
	if err != nil {
		t.Fatal(err)
	}
	p := abCheck(t, r, MetricQPS).Power
	if p == nil || p.Detect == nil || p.Fail == nil {
		t.Fatalf("QPS power %+v: want Detect and Fail", p)
	}
	if *p.Detect < 0.5 || *p.Detect > 8 || *p.Fail < DefaultMaxQPSDrop || *p.Fail > 15 || p.Samples != 10 {
		t.Errorf("QPS power: detect %.2f%%, fail %.2f%%, %d pairs; want detect in [0.5, 8], fail in [5, 15], 10 pairs", *p.Detect, *p.Fail, p.Samples)
	}
	s := p.Sentence(MetricQPS, "pairs")
	if !strings.HasPrefix(s, "with 10 pairs at this noise") || !strings.Contains(s, "detected 95% of the time") || !strings.Contains(s, "a drop of") {
		t.Errorf("Sentence = %q", s)
	}
	a, b = abRuns(3, 0.1, 0.02, 1, 1, 5)
	r, _ = AB(a, b, DefaultGateConfig)
	if p := abCheck(t, r, MetricQPS).Power; p.Detect != nil {
		t.Errorf("3 pairs: Detect = %v, want nil (no change is detectable)", *p.Detect)
	} else if s := p.Sentence(MetricQPS, "pairs"); !strings.Contains(s, "no QPS change would be detected") {
		t.Errorf("3 pairs: Sentence = %q", s)
	}
}

func TestABMinPairs(t *testing.T) {
	for _, tt := range []struct {
		alpha  float64
		checks int
		want   int
	}{
		{0.05, 3, 7},   // 2/2^7 = 0.016 < 0.0167
		{0.05, 1, 6},   // 2/2^6 = 0.031 < 0.05
		{0.05, 15, 10}, // five levels: 2/2^9 = 0.0039 is not below 0.0033, 2/2^10 = 0.002 is
	} {
		if got := ABMinPairs(tt.alpha, tt.checks); got != tt.want {
			t.Errorf("ABMinPairs(%v, %d) = %d, want %d", tt.alpha, tt.checks, got, tt.want)
		}
	}
}

func TestABPairing(t *testing.T) {
	a, b := abRuns(6, 0, 0.02, 1, 1, 2)
	b.Steps = b.Steps[:5] // the last pair lost its B (interrupted)
	r, err := AB(a, b, DefaultGateConfig)
	if err != nil {
		t.Fatal(err)
	}
	if c := abCheck(t, r, MetricQPS); len(c.A) != 5 || !strings.Contains(strings.Join(r.Warnings, "\n"), "1 step(s) without a partner") {
		t.Errorf("pairs %d, warnings %q; want 5 pairs and a warning about the unpaired step", len(c.A), r.Warnings)
	}
	if _, err := AB(a, &result.Run{}, DefaultGateConfig); err == nil {
		t.Error("AB against an empty run: no error, want one")
	}
}

func TestABText(t *testing.T) {
	a, b := abRuns(10, 0.1, 0.02, 0.85, 1.15, 1)
	r, err := AB(a, b, DefaultGateConfig)
	if err != nil {
		t.Fatal(err)
	}
	r.A, r.B = "http://127.0.0.1:1/", "http://127.0.0.1:2/"
	var txt, md bytes.Buffer
	r.Text(&txt)
	r.Markdown(&md)
	for _, want := range []string{"Wilcoxon signed-rank", "FAIL: significant and over budget", "ab: FAIL: 2 regressions", "would be detected 95% of the time", "x0.8"} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("Text lacks %q:\n%s", want, txt.String())
		}
	}
	if !strings.Contains(md.String(), "## apiperf ab: FAIL (2 regressions)") {
		t.Errorf("Markdown:\n%s", md.String())
	}
	if _, err := r.JSON(); err != nil {
		t.Errorf("JSON: %v", err)
	}
	golden.Check(t, "ab.golden.txt", txt.Bytes())
	golden.Check(t, "ab.golden.md", md.Bytes())
}

// An estimate over budget that the pairs cannot tell from noise is inconclusive in every
// rendering: the check, the headline of the text and the Markdown, and the JSON's outcome.
func TestABInconclusive(t *testing.T) {
	// B's QPS per pair: mostly 10-20% below A's, four pairs a little above: over the 5%
	// budget in the estimate, but four pairs of ten the other way are no evidence.
	ratios := []float64{0.80, 1.02, 0.85, 0.99, 0.82, 1.03, 0.88, 1.01, 0.84, 0.90}
	a := &result.Run{Version: result.Version, Kind: result.KindRun}
	b := &result.Run{Version: result.Version, Kind: result.KindRun}
	for i, f := range ratios {
		a.Steps = append(a.Steps, gateStep("c=4", i, 10000, 2, 0))
		b.Steps = append(b.Steps, gateStep("c=4", i, 10000*f, 2, 0))
	}
	r, err := AB(a, b, DefaultGateConfig)
	if err != nil {
		t.Fatal(err)
	}
	c := abCheck(t, r, MetricQPS)
	if !c.OverBudget || c.Significant || !c.Tested || !c.Inconclusive || c.Regression {
		t.Fatalf("QPS check %+v: want over budget, tested, not significant: inconclusive", c)
	}
	if r.Outcome() != OutcomeInconclusive || r.Pass() {
		t.Errorf("Outcome() = %s, Pass() = %v; want inconclusive, not a pass", r.Outcome(), r.Pass())
	}
	var txt, md bytes.Buffer
	if err := r.Text(&txt); err != nil {
		t.Fatal(err)
	}
	if err := r.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	js, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(txt.String(), "ab: INCONCLUSIVE: 1 check over budget, not significant") || strings.Contains(txt.String(), "PASS") {
		t.Errorf("Text:\n%s\nwant the INCONCLUSIVE headline and no PASS", txt.String())
	}
	if !strings.HasPrefix(md.String(), "## apiperf ab: INCONCLUSIVE (1 check over budget, not significant)") {
		t.Errorf("Markdown starts %q, want the INCONCLUSIVE headline", strings.SplitN(md.String(), "\n", 2)[0])
	}
	if !strings.Contains(string(js), `"outcome": "inconclusive"`) || !strings.Contains(string(js), `"inconclusive": true`) {
		t.Errorf("JSON lacks the inconclusive outcome:\n%s", js)
	}
}

// An A/B comparison of streamed runs reports the change of the p99 time to first message,
// not gated (its Bonferroni share is the gated checks'); runs without streams have no such
// check, and their gated count is the same either way.
func TestABFirstMessage(t *testing.T) {
	a, b := abRuns(12, 0.05, 0.01, 1, 1, 3)
	plain, err := AB(a, b, DefaultGateConfig)
	if err != nil {
		t.Fatal(err)
	}
	withStreams(a, 5, 100)
	withStreams(b, 6, 150)
	res, err := AB(a, b, DefaultGateConfig)
	if err != nil {
		t.Fatal(err)
	}
	var first *ABCheck
	for i, c := range res.Checks {
		if c.Metric == MetricFirstP99 {
			first = &res.Checks[i]
		}
	}
	if first == nil || first.Gated || first.Change < 40 || first.Change > 60 || res.CheckAlpha != plain.CheckAlpha {
		t.Errorf("first_p99 100 -> 150 ms: check %+v, check alpha %g (without streams %g); want reported, not gated, about +50%%, the same alpha",
			first, res.CheckAlpha, plain.CheckAlpha)
	}
	for _, c := range plain.Checks {
		if c.Metric == MetricFirstP99 {
			t.Errorf("runs without streams got a %s check: %+v", MetricFirstP99, c)
		}
	}
}
