package sweep

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
)

// portLimited wraps a fake target: above ports connections (or a rate needing more than
// ports connections at 10 ms each) the step opened only ports and says so.
func portLimited(f *target, ports int) StepFunc {
	return func(ctx context.Context, cfg load.Config) (*measure.Step, error) {
		s, err := f.step(ctx, cfg)
		need := cfg.Connections
		if cfg.OpenLoop() {
			need = int(cfg.Rate / 100)
		}
		if err == nil && need > ports {
			s.GeneratorLimit = &measure.GeneratorLimit{Errno: "EADDRNOTAVAIL", Resource: "local ports", Connections: ports, Wanted: need, Fix: "add source addresses with --source"}
		}
		return s, err
	}
}

func TestGeneratorLimitedLevelIsNeitherPeakNorKnee(t *testing.T) {
	obj, _ := ParseObjective("p99<=2s,success>=99%")
	synctest.Test(t, func(t *testing.T) {
		f := &target{shape: func(level float64, _ int) (float64, float64, time.Duration) {
			return 100 * level, 100, time.Duration(level) * time.Millisecond // it only grows
		}}
		rec := NewRecord(Plan{Levels: []int{500, 1000, 1500, 3000}}, obj, Rules{})
		steps, err := Runner{Base: load.Config{Threads: 1, Duration: measure.Duration(time.Second)}, Step: portLimited(f, 1000)}.Run(t.Context(), rec)
		if err != nil {
			t.Fatal(err)
		}
		// c=1500 hit the limit: the sweep stops there (c=3000 would measure apiperf's machine).
		if len(steps) != 3 || rec.Stop == nil || rec.Stop.Rule != RuleGeneratorLimit || rec.Stop.After != "c=1500" {
			t.Fatalf("Run: %d steps, stop %+v; want 3 steps and a generator-limit stop after c=1500", len(steps), rec.Stop)
		}
		if !strings.Contains(rec.Stop.Reason, "local ports exhausted (EADDRNOTAVAIL) at 1000 of 1500 connections") {
			t.Errorf("stop reason %q; want the limit named with its numbers", rec.Stop.Reason)
		}
		last := rec.Levels[2]
		if !last.GeneratorLimited() || last.Errors.Total() != 0 {
			t.Errorf("c=1500: limited %v, errors %+v; want limited, no errors", last.GeneratorLimited(), last.Errors)
		}
		// c=1500 has the highest QPS, but its numbers are the generator's: the peak and knee are c=1000.
		if rec.Peak != 1 || rec.Knee != 1 || rec.Limit != 1 {
			t.Errorf("peak %d knee %d limit %d; want 1 1 1 (c=1000)", rec.Peak, rec.Knee, rec.Limit)
		}
		if w := strings.Join(Analyze(rec.Levels, obj).Warnings, "\n"); !strings.Contains(w, "c=1500 is generator-limited") {
			t.Errorf("warnings %q; want c=1500 named generator-limited", w)
		}
	})
}

func TestCapacityGivesUp(t *testing.T) {
	obj, _ := ParseObjective(DefaultObjective)
	for _, tc := range []struct {
		name     string
		step     func(f *target) StepFunc
		probes   string // verdicts in order
		headline string
	}{
		// the first probe's warmup cannot connect: no probe is run, the search ends at once
		{"unreachable", func(f *target) StepFunc {
			return func(ctx context.Context, cfg load.Config) (*measure.Step, error) {
				s, err := f.step(ctx, cfg)
				s.Attempts, s.Requests, s.Successes = 0, 0, 0
				why := load.UnreachablePrefix + "127.0.0.1:1: connection refused (no connection opened in 1s); stopped"
				s.Warnings = []string{why} // as the engine says it: a warning and the typed failure
				s.Failure = &measure.Failure{Kind: measure.FailureUnreachable, Reason: why}
				return s, err
			}
		}, "", "capacity: unknown: gave up at warming up rate=100/s: unable to connect to 127.0.0.1:1: connection refused"},
		// the rate needs more connections than apiperf can open: that probe is the
		// generator's, not a failure of the target, and the search stops there
		{"generator-limited", func(f *target) StepFunc { return portLimited(f, 3) }, "met met generator-limited",
			"capacity: at least 200 req/s meets p99<=500ms,success>=99.9%; gave up at rate=400/s: generator limit: local ports exhausted (EADDRNOTAVAIL) at 3 of 4 connections"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &target{shape: rateTarget(100000)}
				r := CapacityRunner{Search: Search{}.WithDefaults(), Objective: obj, Warmup: time.Second,
					Base: load.Config{Duration: measure.Duration(time.Second)}, Step: tc.step(f)}
				start := time.Now()
				c, _, err := r.Run(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				var verdicts []string
				for _, p := range c.Probes {
					verdicts = append(verdicts, p.Verdict)
				}
				if got := strings.Join(verdicts, " "); got != tc.probes {
					t.Errorf("verdicts %q, want %q", got, tc.probes)
				}
				if h := c.Headline(); !strings.HasPrefix(h, tc.headline) {
					t.Errorf("Headline() = %q, want it to start %q", h, tc.headline)
				}
				// About 1 s (the connect grace); 5 s leaves room for a busy machine and still
				// tells giving up from probing on.
				if tc.name == "unreachable" && time.Since(start) > 5*time.Second {
					t.Errorf("gave up after %v; want within 5s", time.Since(start))
				}
			})
		})
	}
}
