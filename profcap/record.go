package profcap

import (
	"time"

	"github.com/apiperf/apiperf/exectrace"
	"github.com/apiperf/apiperf/procfs"
)

// Record is what a capture Session took from the target while the load ran: the pprof
// profiles and the Prometheus metrics, per step; run.json keeps it as "target".
type Record struct {
	// Pprof is the target's net/http/pprof base URL, e.g. http://127.0.0.1:6060/debug/pprof.
	Pprof string `json:"pprof,omitempty"`
	// Metrics is the target's Prometheus text endpoint.
	Metrics string `json:"metrics,omitempty"`
	// PIDSource says how the target's process was found ("--target-pid", "listening on
	// 127.0.0.1:8080") or why it was not.
	PIDSource string `json:"pid_source,omitempty"`
	// ProfileLevels is what --profile-levels asked for ("peak", "last", labels, "all").
	ProfileLevels []string `json:"profile_levels,omitempty"`
	// Steps holds one entry per measured step that had something captured, by label.
	Steps []StepRecord `json:"steps,omitempty"`
	// Warnings are run-level notes about the capture (e.g. profiles dropped at levels not chosen).
	Warnings []string `json:"warnings,omitempty"`
}

// StepRecord is what was captured while one step (load level) ran.
type StepRecord struct {
	// Label is the step's label, e.g. "c=50" (and Rep its repetition).
	Label string `json:"label"`
	Rep   int    `json:"rep,omitempty"`
	// Start is when the step's capture started (the load's start, give or take a scheduling delay).
	Start time.Time `json:"start"`
	// CPUFrom and CPUSeconds place the CPU profile in the step: it began CPUFrom after Start.
	CPUFrom    time.Duration `json:"cpu_from_ns,omitempty"`
	CPUSeconds int           `json:"cpu_seconds,omitempty"`
	// Profiles is the analysis of the captured profiles (top tables, shares, alloc
	// sites, goroutines, flame graph), nil when none was captured or kept.
	Profiles *Analysis `json:"profiles,omitempty"`
	// Trace is the execution trace taken at this step and what it showed; nil when none was
	// captured or kept.
	Trace *TraceRecord `json:"trace,omitempty"`
	// Files are the saved .pb.gz profiles and trace.out, relative to the run.json's directory.
	Files []string `json:"files,omitempty"`
	// Series is the metrics timeline of the step (offsets from Start), nil without --metrics.
	Series *Series `json:"series,omitempty"`
	// Summary is Series over the whole step: means and maxima, GC totals.
	Summary *Summary `json:"summary,omitempty"`
	// Process is the target process's CPU and RSS sampled from /proc (--target-pid), and
	// ProcessSummary the same over the step's window; nil without --target-pid.
	Process        *Series  `json:"process,omitempty"`
	ProcessSummary *Summary `json:"process_summary,omitempty"`
	// Outbound lists the connections the target's process had open to other services as
	// the step ended (a database, a cache, a downstream), by remote address; nil without a PID.
	Outbound []procfs.Peer `json:"outbound,omitempty"`
	// Machine is the whole machine's CPU over the step (/proc/stat), everyone's.
	Machine *procfs.MachineUse `json:"machine,omitempty"`
	// Warnings are this step's capture problems, e.g. "captured 2 of 3 profiles: heap: 404 Not Found".
	Warnings []string `json:"warnings,omitempty"`
}

// TraceRecord places a step's execution trace and holds its summary.
type TraceRecord struct {
	// From is when the trace began after the step's Start, Length how long it was asked to last.
	From   time.Duration `json:"from_ns"`
	Length time.Duration `json:"length_ns"`
	// Bytes is the size of the saved trace.out.
	Bytes   int64              `json:"bytes"`
	Summary *exectrace.Summary `json:"summary"`
}

// Traced lists the steps that kept an execution trace summary, in order.
func (t *Record) Traced() []*StepRecord {
	return t.stepsWhere(func(s *StepRecord) bool { return s.Trace != nil })
}

// Step returns the capture of the step with label and rep, or nil.
func (t *Record) Step(label string, rep int) *StepRecord {
	if t == nil {
		return nil
	}
	for i := range t.Steps {
		if t.Steps[i].Label == label && t.Steps[i].Rep == rep {
			return &t.Steps[i]
		}
	}
	return nil
}

// Profiled lists the steps that kept a profile analysis, in order.
func (t *Record) Profiled() []*StepRecord {
	return t.stepsWhere(func(s *StepRecord) bool { return s.Profiles != nil })
}

// stepsWhere lists the steps for which keep is true, in order.
func (t *Record) stepsWhere(keep func(*StepRecord) bool) []*StepRecord {
	if t == nil {
		return nil
	}
	var out []*StepRecord
	for i := range t.Steps {
		if keep(&t.Steps[i]) {
			out = append(out, &t.Steps[i])
		}
	}
	return out
}

// AllWarnings lists the capture's warnings followed by each step's, prefixed with its label.
func (t *Record) AllWarnings() []string {
	if t == nil {
		return nil
	}
	out := append([]string(nil), t.Warnings...)
	for _, s := range t.Steps {
		for _, w := range s.Warnings {
			out = append(out, s.Label+": "+w)
		}
	}
	return out
}
