package verdict

import (
	"fmt"
	"strings"
)

// Worker is one scale-out worker's own generator at a level. The merged Generator sums the
// workers' CPU and cores, which hides one starved worker among many: the generator claims
// read each worker too.
type Worker struct {
	Name string `json:"name"` // "worker 2 (gen-b)"
	// Generator is the worker's own process during the level; nil when not measured.
	Generator *Usage `json:"generator,omitempty"`
	// GeneratorLimit is the limit of its machine it hit ("": none).
	GeneratorLimit string `json:"generator_limit,omitempty"`
	// Others is the CPU other processes of its machine took, in cores (0: unknown or none).
	Others float64 `json:"others_cores,omitempty"`
}

// workersShort is the evidence that workers of level l were short of CPU, each at its own
// cores or starved on its machine, the names of those workers, and whether every one of
// them was on a machine other processes shared (then the claim is no more than medium).
func (j *judgement) workersShort(l Level) (ev, names []string, shared bool) {
	shared = true
	for _, w := range l.Workers {
		g := w.Generator
		if g == nil || g.Cores <= 0 {
			continue
		}
		var e string
		switch {
		case g.CPUCores >= j.t.CPUSaturated*g.Cores:
			e = fmt.Sprintf("at %s %s used %.2f of its %g cores", l.Label, w.Name, g.CPUCores, g.Cores)
		case j.starved(g, g.Cores):
			e = fmt.Sprintf("at %s %s", l.Label, g.starvation(w.Name, g.Cores))
		default:
			continue
		}
		if w.Others >= j.t.OthersCores {
			e += fmt.Sprintf(" (other processes of its machine took %.2f cores)", w.Others)
		} else {
			shared = false
		}
		ev, names = append(ev, e), append(names, w.Name)
	}
	return ev, names, shared && len(names) > 0
}

// ofWorkers names workers among all of a level: "worker 2 (gen-b) of 3 workers".
func ofWorkers(names []string, all int) string {
	return fmt.Sprintf("%s of %d workers", strings.Join(names, ", "), all)
}

// workersLimited is the evidence of the workers of level l that hit a limit of their
// machine, and their names.
func workersLimited(l Level) (ev, names []string) {
	for _, w := range l.Workers {
		if w.GeneratorLimit != "" {
			ev = append(ev, fmt.Sprintf("at %s %s: %s", l.Label, w.Name, w.GeneratorLimit))
			names = append(names, w.Name)
		}
	}
	return ev, names
}
