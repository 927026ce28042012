package compare

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/sweep"
)

// cpuPairs makes n pairs of steps with the target's CPU per request: about 200 µs on A,
// cpuB times that on B, each step with its own noise; QPS and p99 swing by 50% from step
// to step (a busy machine), alike on both sides.
func cpuPairs(n int, noise, cpuB float64, seed uint64) (a, b []*measure.Step) {
	rng := rand.New(rand.NewPCG(seed, 3))
	for i := range n {
		for side, f := range []float64{1, cpuB} {
			s := gateStep("c=4", i, 5000*(1+0.5*rng.Float64()), 5*(1+0.5*rng.Float64()), 0)
			s.TargetCPU = measure.Duration(time.Duration(float64(s.Requests) * 200e3 * f * (1 + noise*rng.NormFloat64())))
			if side == 0 {
				a = append(a, s)
			} else {
				b = append(b, s)
			}
		}
	}
	return a, b
}

func TestABSettled(t *testing.T) {
	alpha := ABCheckAlpha(DefaultAlpha, 4, 3) // 4 gated checks (CPU measured), 3 looks
	tests := []struct {
		name  string
		n     int
		noise float64
		cpuB  float64
		want  bool
	}{
		// Identical CPU per request within 1%: the CI lies inside the 5% budget, settled (pass)
		// although QPS and p99 say nothing.
		{"A/A quiet", 10, 0.01, 1, true},
		// B 15% dearer: a significant regression, settled (fail).
		{"B +15%", 10, 0.03, 1.15, true},
		// CPU noise of 10% per step: 10 pairs cannot bound the change within 5%, more needed.
		{"A/A noisy", 10, 0.10, 1, false},
		// B 4% dearer with 0.5% noise: significant, and the whole CI within the 5% budget: a pass.
		{"B +4% quiet", 10, 0.005, 1.04, true},
		// B 2% dearer with 4% noise: not significant, the CI straddles the budget: more pairs.
		{"B +2% noisy", 10, 0.04, 1.02, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := cpuPairs(tt.n, tt.noise, tt.cpuB, 7)
			if got := ABSettled(DefaultGateConfig, alpha, a, b); got != tt.want {
				t.Errorf("ABSettled(%d pairs, CPU noise %g, B x%g) = %v, want %v", tt.n, tt.noise, tt.cpuB, got, tt.want)
			}
		})
	}
	// Without the CPU, QPS and p99 decide: 50% swings cannot be bounded within 5%.
	a, b := cpuPairs(10, 0.01, 1, 7)
	for _, s := range append(a, b...) {
		s.TargetCPU = 0
	}
	if ABSettled(DefaultGateConfig, ABCheckAlpha(DefaultAlpha, 3, 3), a, b) {
		t.Error("ABSettled without CPU and with QPS swinging by 50% = true, want false")
	}
}

// TestABLooks: a run that could look 3 times tests each check at a third of the level.
func TestABLooks(t *testing.T) {
	a, b := abRuns(10, 0.1, 0.02, 1, 1, 1)
	one, err := AB(a, b, DefaultGateConfig)
	if err != nil {
		t.Fatal(err)
	}
	a.AB = &sweep.ABRecord{Side: sweep.SideA, Looks: 3}
	three, err := AB(a, b, DefaultGateConfig)
	if err != nil {
		t.Fatal(err)
	}
	if one.CheckAlpha != DefaultAlpha/3 || three.CheckAlpha != DefaultAlpha/9 || three.Looks != 3 {
		t.Errorf("check alpha with 1 look %g, with 3 looks %g (looks %d); want %g and %g", one.CheckAlpha, three.CheckAlpha, three.Looks, DefaultAlpha/3, DefaultAlpha/9)
	}
	if m := three.Method(); !strings.Contains(m, "over 3 gated checks x 3 looks") {
		t.Errorf("Method() = %q, want it to name 3 checks x 3 looks", m)
	}
}
