package compare

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/sample"
)

// historyRuns makes n runs of 5 repetitions at c=10 whose level drifts from run to run by
// drift (relative), a step of stepAt (relative) from run stepFrom on.
func historyRuns(n int, drift float64, stepFrom int, step float64, seed uint64) []*result.Run {
	rng := rand.New(rand.NewPCG(seed, 3))
	var out []*result.Run
	for i := range n {
		f := 1 + drift*rng.NormFloat64()
		if stepFrom > 0 && i >= stepFrom {
			f *= 1 + step
		}
		r := gateRun([]string{"c=10"}, 5, func(string, int) (float64, float64, float64) {
			return 10000 * f * (1 + 0.005*rng.NormFloat64()), 2 / f * (1 + 0.005*rng.NormFloat64()), 0
		})
		r.Scenario.URL = "http://127.0.0.1:8080/"
		out = append(out, r)
	}
	return out
}

func TestLearnNoise(t *testing.T) {
	tests := []struct {
		name   string
		hist   []*result.Run
		lo, hi float64 // QPS band wanted, percent
		warn   bool
	}{
		// 3% run-to-run drift: two runs differ by up to about 1.96 x sqrt(2) x 3% = 8.3%.
		{"3% drift", historyRuns(20, 0.03, 0, 0, 1), 5, 12, false},
		// A past 10% step in the history barely widens the band (successive differences).
		{"3% drift and a step", historyRuns(20, 0.03, 10, -0.10, 1), 5, 13, false},
		// Quiet history: a narrow band.
		{"0.5% drift", historyRuns(20, 0.005, 0, 0, 2), 0.5, 3, false},
		// Four runs are too few: no band, a warning.
		{"too few", historyRuns(4, 0.03, 0, 0, 1), 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			like := historyRuns(1, 0, 0, 0, 9)[0]
			bands, warns := LearnNoise(tt.hist, like)
			if (len(warns) > 0) != tt.warn {
				t.Errorf("warnings %q, want some: %v", warns, tt.warn)
			}
			b := findBand(bands, "c=10", MetricQPS)
			if tt.warn {
				if b != nil {
					t.Errorf("band %+v, want none", *b)
				}
				return
			}
			if b == nil || b.Band < tt.lo || b.Band > tt.hi || b.Runs != min(len(tt.hist), MaxNoiseRuns) {
				t.Errorf("QPS band %+v, want within [%v, %v]%% from %d runs", b, tt.lo, tt.hi, min(len(tt.hist), MaxNoiseRuns))
			}
		})
	}
}

// Runs of another URL or load shape teach nothing about this one.
func TestLearnNoiseShape(t *testing.T) {
	hist := historyRuns(10, 0.03, 0, 0, 1)
	for _, r := range hist[:6] {
		r.Scenario.URL = "http://127.0.0.1:9999/other"
	}
	like := historyRuns(1, 0, 0, 0, 9)[0]
	if bands, warns := LearnNoise(hist, like); len(bands) != 0 || len(warns) != 1 || !strings.Contains(warns[0], "only 4 comparable run(s)") {
		t.Errorf("LearnNoise = %v, %q; want no band and a warning about 4 comparable runs", bands, warns)
	}
}

// A 7% drop, significant and over the 5% budget, fails a plain gate; with a history whose
// runs drift by 3% it is within the noise and passes, saying why; a 20% drop fails both.
func TestGateHistory(t *testing.T) {
	hist := historyRuns(20, 0.03, 0, 0, 4)
	base := hist[len(hist)-1]
	for _, tt := range []struct {
		drop              float64
		plain, historical bool // regression?
	}{{0.07, true, false}, {0.20, true, true}} {
		cur := gateRun([]string{"c=10"}, 5, func(_ string, i int) (float64, float64, float64) {
			return sample.Median(GateSamples(MetricQPS, base.Steps)) * (1 - tt.drop) * (1 + 0.002*float64(i-2)), 2, 0
		})
		cur.Scenario.URL = base.Scenario.URL
		plain, err := Gate(base, cur, DefaultGateConfig)
		if err != nil {
			t.Fatal(err)
		}
		withHist, err := GateHistory(base, cur, DefaultGateConfig, hist[:len(hist)-1])
		if err != nil {
			t.Fatal(err)
		}
		p, h := gateQPS(t, plain), gateQPS(t, withHist)
		if p.Regression != tt.plain || h.Regression != tt.historical || h.NoiseBand == nil {
			t.Errorf("%.0f%% drop: plain gate regression %v (want %v); with history %v (want %v), band %+v",
				100*tt.drop, p.Regression, tt.plain, h.Regression, tt.historical, h.NoiseBand)
		}
		if !tt.historical && !strings.Contains(checkVerdict(h), "within the history's run-to-run noise") {
			t.Errorf("verdict %q, want it to name the noise", checkVerdict(h))
		}
		if h.Power == nil || h.Power.Fail == nil || *h.Power.Fail < h.NoiseBand.Band {
			t.Errorf("power %+v with band %v: want a failing change beyond the band", h.Power, h.NoiseBand.Band)
		}
	}
	_, err := GateHistory(base, base, DefaultGateConfig, hist[:2])
	if err != nil {
		t.Fatal(err)
	}
}

func gateQPS(t *testing.T, g *GateResult) GateCheck {
	t.Helper()
	for _, c := range g.Checks {
		if c.Metric == MetricQPS {
			return c
		}
	}
	t.Fatal("no QPS check")
	return GateCheck{}
}
