// Package conditions records what a run was measured on: the generator's machine (CPU,
// kernel, cgroup limits, load), the CPU other processes took during each step, and the
// target's build. run.json holds the Record; comparisons check two of them and say when
// two runs cannot be compared.
package conditions

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Version is the version of the Record's layout.
const Version = 1

// Record is the conditions of one run.
type Record struct {
	Version   int       `json:"version"`
	Generator Generator `json:"generator"`
	// Target is the target's process and build; nil when nothing could be learned of it.
	Target *Target `json:"target,omitempty"`
	// Steps is the machine during each measured step, in the order they ran.
	Steps []StepSample `json:"steps,omitempty"`
}

// Generator is the machine and build apiperf ran on, read when the run started.
type Generator struct {
	Apiperf    string `json:"apiperf"`    // apiperf's version
	GoVersion  string `json:"go_version"` // of apiperf's build
	Arch       string `json:"arch"`       // GOOS/GOARCH
	GOMAXPROCS int    `json:"gomaxprocs"` // during the first step
	Threads    int    `json:"threads"`    // engine threads (-t)
	CPUModel   string `json:"cpu_model,omitempty"`
	CPUs       int    `json:"cpus"` // logical CPUs online
	// Governor is the CPU frequency governor(s), e.g. "performance"; "" where not readable
	// (most virtual machines).
	Governor string `json:"governor,omitempty"`
	Kernel   string `json:"kernel,omitempty"` // release, e.g. 6.1.0-18-amd64
	// CPULimit is apiperf's cgroup CPU limit (quota / period) in cores; 0: none.
	CPULimit float64 `json:"cpu_limit,omitempty"`
	// MemoryLimit is apiperf's cgroup memory limit in bytes; 0: none.
	MemoryLimit int64 `json:"memory_limit,omitempty"`
	// Load is the load average over 1, 5 and 15 minutes when the run started.
	Load [3]float64 `json:"load_average"`
}

// StepSample is the machine during one measured step. CPU figures are in cores (CPU seconds per
// second of the step).
type StepSample struct {
	Label   string  `json:"label"`
	Rep     int     `json:"rep,omitempty"`
	Seconds float64 `json:"seconds"` // how long it was sampled
	Busy    float64 `json:"busy"`    // the whole machine (/proc/stat), kernel included
	Apiperf float64 `json:"apiperf"` // apiperf's own CPU
	// Target is the target process's CPU; nil when its process is not known.
	Target *float64 `json:"target,omitempty"`
	// Others is the CPU everything else took: Busy less apiperf's and the target's.
	Others    float64 `json:"others"`
	OthersMax float64 `json:"others_max"` // the highest one-interval mean of Others
	// OthersHasTarget says Others includes the target's CPU: it runs on this machine (a
	// loopback address) but its process is not known.
	OthersHasTarget bool    `json:"others_has_target,omitempty"`
	StealPct        float64 `json:"steal_pct"` // the share of the machine's CPU a hypervisor took
	// RunWait is how long apiperf's threads waited for a CPU, per second: CPU it wanted
	// and did not get (cores; 0 unknown).
	RunWait float64 `json:"run_wait"`
	Samples int     `json:"samples"`
}

// Name is the step as tables name it: "c=50" or "c=50 #2" for a repetition.
func (s StepSample) Name() string {
	if s.Rep > 0 {
		return fmt.Sprintf("%s #%d", s.Label, s.Rep+1)
	}
	return s.Label
}

// Thresholds say when the conditions are off: what Off reports and Busy tests.
type Thresholds struct {
	// OthersCores is the CPU other processes may take during a step, in cores.
	OthersCores float64 `json:"others_cores"`
	// StealPct is the share of the machine's CPU a hypervisor may take, in percent.
	StealPct float64 `json:"steal_pct"`
}

// DefaultThresholds: another process taking more than a quarter of a core, or steal above
// 5%, makes a busy machine.
var DefaultThresholds = Thresholds{OthersCores: 0.25, StealPct: 5}

// busiest is the step where other processes took the most CPU (nil without steps), and how
// many steps were over t.
func (r *Record) busiest(t Thresholds) (*StepSample, int) {
	var worst *StepSample
	n := 0
	for i := range r.Steps {
		s := &r.Steps[i]
		if s.OthersHasTarget {
			continue
		}
		if s.Others > t.OthersCores {
			n++
		}
		if worst == nil || s.Others > worst.Others {
			worst = s
		}
	}
	return worst, n
}

// Busy says why the machine was busy during the run (other processes or steal over t), or
// "" when it was not or nothing is known.
func (r *Record) Busy(t Thresholds) string {
	if r == nil {
		return ""
	}
	var why []string
	if s, n := r.busiest(t); n > 0 {
		why = append(why, fmt.Sprintf("other processes took %.2f cores (max %.2f) during %s%s", s.Others, s.OthersMax, s.Name(), ofSteps(n, len(r.Steps), t.OthersCores)))
	}
	steal := 0.0
	var at string
	for _, s := range r.Steps {
		if s.StealPct > steal {
			steal, at = s.StealPct, s.Name()
		}
	}
	if steal > t.StealPct {
		why = append(why, fmt.Sprintf("steal was %.1f%% during %s", steal, at))
	}
	return strings.Join(why, "; ")
}

// ofSteps is " (2 of 5 steps over 0.25 cores)" when more than one step ran.
func ofSteps(n, of int, over float64) string {
	if of <= 1 {
		return ""
	}
	return fmt.Sprintf(" (%d of %d steps over %s cores)", n, of, trim(over))
}

// Off lists what is off in the conditions, worst first: a busy machine, a powersave
// governor, a cgroup CPU limit below the cores apiperf uses, a target built with -race.
// Empty on a quiet, unconstrained machine and for a nil record.
func (r *Record) Off(t Thresholds) []string {
	if r == nil {
		return nil
	}
	var out []string
	if b := r.Busy(t); b != "" {
		out = append(out, b)
	}
	g := r.Generator
	if strings.Contains(g.Governor, "powersave") {
		out = append(out, "the CPU frequency governor is "+g.Governor)
	}
	if uses := apiperfCores(g); g.CPULimit > 0 && g.CPULimit < uses {
		out = append(out, fmt.Sprintf("apiperf's cgroup allows %s cores, fewer than the %d it uses (GOMAXPROCS)", trim(g.CPULimit), int(uses)))
	}
	if tg := r.Target; tg != nil && tg.Build != nil && tg.Build.Race {
		out = append(out, "the target was built with -race (its numbers are several times slower than a normal build's)")
	}
	return out
}

// apiperfCores is the cores apiperf runs on: GOMAXPROCS, no more than the machine's CPUs.
func apiperfCores(g Generator) float64 {
	n := g.GOMAXPROCS
	if g.CPUs > 0 && (n == 0 || g.CPUs < n) {
		n = g.CPUs
	}
	return float64(n)
}

// trim prints a number of cores without trailing zeros: 1.5, 2.
func trim(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return strings.TrimRight(fmt.Sprintf("%.2f", v), "0")
}

// String describes the generator in one line: "Intel(R) Xeon(R) Processor, 2 CPUs, Linux
// 6.1.0, GOMAXPROCS 2, apiperf v1.2.0 (go1.26.8)".
func (g Generator) String() string {
	parts := []string{orUnknown(g.CPUModel, "unknown CPU"), fmt.Sprintf("%d CPUs", g.CPUs)}
	if g.Kernel != "" {
		parts = append(parts, "kernel "+g.Kernel)
	}
	parts = append(parts, fmt.Sprintf("GOMAXPROCS %d", g.GOMAXPROCS))
	if g.Governor != "" {
		parts = append(parts, "governor "+g.Governor)
	}
	if g.CPULimit > 0 {
		parts = append(parts, "cgroup CPU limit "+trim(g.CPULimit)+" cores")
	}
	if g.MemoryLimit > 0 {
		parts = append(parts, fmt.Sprintf("cgroup memory limit %d MiB", g.MemoryLimit>>20))
	}
	parts = append(parts, fmt.Sprintf("load %.2f", g.Load[0]))
	tool := "apiperf " + g.Apiperf
	if g.GoVersion != "" && !strings.Contains(g.Apiperf, g.GoVersion) { // a build's version names its Go already
		tool += " (" + g.GoVersion + ")"
	}
	return strings.Join(parts, ", ") + "; " + tool
}

// String describes the run's conditions in one line: the generator, and the target's build.
func (r *Record) String() string {
	if r == nil {
		return Unknown
	}
	s := r.Generator.String()
	if r.Target != nil {
		s += "; target " + r.Target.String()
	}
	return s
}

// Unknown is what a run without a record (written by an apiperf before 2026-11) says.
const Unknown = "conditions unknown (not recorded by the apiperf that made this run)"

func orUnknown(s, unknown string) string {
	if s == "" {
		return unknown
	}
	return s
}

// Step returns the conditions of the step label, repetition rep; nil when not recorded.
func (r *Record) Step(label string, rep int) *StepSample {
	if r == nil {
		return nil
	}
	i := slices.IndexFunc(r.Steps, func(s StepSample) bool { return s.Label == label && s.Rep == rep })
	if i < 0 {
		return nil
	}
	return &r.Steps[i]
}
