package verdict

import (
	"strings"
	"testing"
)

// threeWorkers are three workers with 2 cores each, healthy, at a level.
func threeWorkers() []Worker {
	return []Worker{
		{Name: "worker 1 (gen-a)", Generator: &Usage{CPUCores: 0.4, Cores: 2}},
		{Name: "worker 2 (gen-b)", Generator: &Usage{CPUCores: 0.4, Cores: 2}},
		{Name: "worker 3 (gen-c)", Generator: &Usage{CPUCores: 0.4, Cores: 2}},
	}
}

// TestWorkersGeneratorClaims: the generator claims read every worker of a scaled-out run,
// so one sick worker of three, which the merged generator (sums of CPU and cores) hides, is
// named with its reason.
func TestWorkersGeneratorClaims(t *testing.T) {
	for _, tc := range []struct {
		name   string
		worker func(w *Worker)
		kind   Kind
		conf   Confidence
		says   []string // in the summary and the evidence
	}{
		// Worker 2 at its cores while the merged 2.8 of 6 cores is far from them.
		{"at its cores", func(w *Worker) { w.Generator.CPUCores = 1.95 }, GeneratorBound, High,
			[]string{"short of CPU on worker 2 (gen-b) of 3 workers", "at c=40 worker 2 (gen-b) used 1.95 of its 2 cores"}},
		// Worker 2 kept off its cores (used 0.6, waited 1.3 s/s) on a machine others did not take.
		{"starved", func(w *Worker) { w.Generator.CPUCores, w.Generator.RunWaitCores = 0.6, 1.3 }, GeneratorBound, High,
			[]string{"on worker 2 (gen-b) of 3 workers", "worker 2 (gen-b) used 0.60 cores and its threads waited 1.30 s per second"}},
		// The same on a machine other processes took 1.2 cores of: medium, and said.
		{"starved on a shared machine", func(w *Worker) { w.Generator.CPUCores, w.Generator.RunWaitCores, w.Others = 0.6, 1.3, 1.2 }, GeneratorBound, Medium,
			[]string{"on worker 2 (gen-b) of 3 workers", "other processes of its machine took 1.20 cores"}},
		// Worker 2 out of open files: the level is generator-limited on worker 2.
		{"limited", func(w *Worker) { w.GeneratorLimit = "open files exhausted (EMFILE) at 4 of 10 connections" }, GeneratorLimited, High,
			[]string{"at c=40 on worker 2 (gen-b) of 3 workers", "at c=40 worker 2 (gen-b): open files exhausted (EMFILE) at 4 of 10"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			levels := closed([3]float64{20, 10000, 2}, [3]float64{40, 12000, 3.3})
			for i := range levels {
				levels[i].Workers = threeWorkers()
				levels[i].Generator = &Usage{CPUCores: 1.2, Cores: 6}
			}
			tc.worker(&levels[1].Workers[1])
			if tc.kind == GeneratorLimited {
				levels[1].GeneratorLimit = "open files exhausted (EMFILE) at 24 of 30 connections" // merged
			}
			v := Judge(Input{Levels: levels, Peak: 1})
			c := v.Claim(tc.kind)
			if c == nil {
				t.Fatalf("Judge kinds %v; want %s", v.Kinds(), tc.kind)
			}
			text := c.Summary + "\n" + strings.Join(c.Evidence, "\n")
			for _, s := range tc.says {
				if !strings.Contains(text, s) {
					t.Errorf("claim %s (%s): %q; want it to say %q", c.Kind, c.Confidence, text, s)
				}
			}
			if c.Confidence != tc.conf {
				t.Errorf("claim %s confidence %s; want %s", c.Kind, c.Confidence, tc.conf)
			}
		})
	}
	// Healthy workers: no generator claim (the table above is not vacuous).
	levels := closed([3]float64{20, 10000, 2}, [3]float64{40, 12000, 3.3})
	for i := range levels {
		levels[i].Workers = threeWorkers()
	}
	if v := Judge(Input{Levels: levels, Peak: 1}); v.Has(GeneratorBound) || v.Has(GeneratorLimited) {
		t.Errorf("healthy workers: kinds %v; want no generator claim", v.Kinds())
	}
}
