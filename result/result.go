// Package result is the run document, run.json: a thin versioned envelope holding the spec
// of what was asked (scenario, load), every step's measurements with histograms, the
// records of the packages that made them (sweep.Record, sweep.Capacity, profcap.Record, the
// verdict) and warnings, with encode, decode (older versions upgraded) and merge. Every
// report is rendered from it, so any report can be re-rendered later from run.json alone.
package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apiperf/apiperf/cluster"
	"github.com/apiperf/apiperf/conditions"
	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/outfile"
	"github.com/apiperf/apiperf/profcap"
	"github.com/apiperf/apiperf/scenario"
	"github.com/apiperf/apiperf/sweep"
	"github.com/apiperf/apiperf/verdict"
)

// Version is the run.json schema version. Readers refuse newer versions and upgrade older
// ones. Version 2 keeps a sweep as a sweep.Record (plan, levels, peak, knee, limit).
const Version = 2

// Kinds of run.
const (
	KindRun      = "run"
	KindSweep    = "sweep"
	KindCapacity = "capacity"
)

// Run is one invocation of apiperf and everything it measured.
type Run struct {
	Version  int               `json:"version"`
	Tool     string            `json:"tool"` // "apiperf <version>"
	Kind     string            `json:"kind"`
	Name     string            `json:"name,omitempty"`
	Command  []string          `json:"command"` // the command line, secrets redacted
	Host     string            `json:"host,omitempty"`
	Labels   map[string]string `json:"labels,omitempty"`
	Scenario scenario.Scenario `json:"scenario"` // secrets redacted
	Load     load.Config       `json:"load"`
	Start    time.Time         `json:"start"`
	End      time.Time         `json:"end"`
	Steps    []*measure.Step   `json:"steps"`
	// Sweep is the plan, levels and analysis (peak, knee) of a sweep or capacity search.
	Sweep *sweep.Record `json:"sweep,omitempty"`
	// Capacity is the probe history and answer of a capacity search.
	Capacity *sweep.Capacity `json:"capacity,omitempty"`
	// Native is the same plan run against the built-in plain net/http target (--vs-native).
	Native *Run `json:"native,omitempty"`
	// AB says which interleaved A/B comparison (`apiperf ab`) the run is one side of.
	AB *sweep.ABRecord `json:"ab,omitempty"`
	// Target holds what was captured from the target under load (profiles, metrics).
	Target *profcap.Record `json:"target,omitempty"`
	// Verdict is what limited the run (see package verdict), nil when not judged.
	Verdict *verdict.Verdict `json:"verdict,omitempty"`
	// Cluster is the workers' shares when the run was scaled out (run --workers).
	Cluster *cluster.Record `json:"cluster,omitempty"`
	// Conditions is what the run was measured on (see package conditions); nil in runs
	// made before apiperf recorded them: their conditions are unknown.
	Conditions *conditions.Record `json:"conditions,omitempty"`
	// Objectives is the objective (--objective) judged at every level, nil when none was given.
	Objectives *sweep.ObjectiveReport `json:"objectives,omitempty"`
	Warnings   []string               `json:"warnings,omitempty"`
}

// CheckObjective judges o at every level of the run and keeps the result; it returns the
// terms that failed (none for an empty objective).
func (r *Run) CheckObjective(o sweep.Objective) []sweep.TermResult {
	if len(o.Terms) == 0 {
		r.Objectives = nil
		return nil
	}
	r.Objectives = o.CheckLevels(r.Levels().Levels)
	if len(r.Objectives.Results) == 0 { // no level at all: nothing was measured
		for _, t := range o.Terms {
			r.Objectives.Results = append(r.Objectives.Results, sweep.TermResult{Term: t.String(), Reason: "no level was measured"})
		}
	}
	return r.Objectives.Failed()
}

// Last is the last step (the only one of a plain run), or nil.
func (r *Run) Last() *measure.Step {
	if len(r.Steps) == 0 {
		return nil
	}
	return r.Steps[len(r.Steps)-1]
}

// AllWarnings lists the run's warnings followed by each step's, prefixed with its label.
func (r *Run) AllWarnings() []string {
	out := append([]string(nil), r.Warnings...)
	for _, s := range r.Steps {
		for _, w := range s.Warnings {
			if len(r.Steps) > 1 {
				w = s.Label + ": " + w
			}
			out = append(out, w)
		}
	}
	return out
}

// Levels returns the run's levels and their analysis: the sweep's record when the run has
// one, else its steps reduced and analyzed under the default objective. Every renderer
// draws levels from here.
func (r *Run) Levels() *sweep.Record {
	if r.Sweep != nil {
		return r.Sweep
	}
	return sweep.DefaultRecord(r.Steps)
}

// SetTarget keeps what a capture session took from the target (nothing for nil) and adds
// its warnings to the run's.
func (r *Run) SetTarget(t *profcap.Record) {
	if t == nil {
		return
	}
	r.Target = t
	for _, w := range t.AllWarnings() {
		r.Warnings = append(r.Warnings, "target: "+w)
	}
}

// Encode writes r as indented JSON.
func (r *Run) Encode() ([]byte, error) {
	r.Redact()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // keep "p99<=500ms" readable; HTML reports escape on their own
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return nil, fmt.Errorf("encoding run: %w", err)
	}
	return buf.Bytes(), nil
}

// Save writes r to path atomically (a temporary file renamed into place).
func (r *Run) Save(path string) error {
	b, err := r.Encode()
	if err != nil {
		return err
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("saving run: %w", err)
		}
	}
	if err := outfile.Write(path, b); err != nil {
		return fmt.Errorf("saving run: %w", err)
	}
	return nil
}

// Decode reads a run document; name is used in error messages, which carry the line.
func Decode(name string, data []byte) (*Run, error) { return decode(name, data, nil) }

// decode is Decode of a document whose steps, when not nil, were read already (Load): data
// then holds everything else.
func decode(name string, data []byte, steps []*measure.Step) (*Run, error) {
	if v1, ok := decodeV1(data, steps); ok {
		return finishDecode(name, data, v1)
	}
	var r Run
	if steps != nil {
		r.Steps = steps
	}
	if err := json.Unmarshal(data, &r); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return nil, fmt.Errorf("%s:%d: %v", name, lineOf(data, se.Offset), se)
		case errors.As(err, &te):
			return nil, fmt.Errorf("%s:%d: field %s: %v", name, lineOf(data, te.Offset), te.Field, te)
		}
		return nil, fmt.Errorf("%s:1: %v", name, err)
	}
	return finishDecode(name, data, &r)
}

func finishDecode(name string, data []byte, rp *Run) (*Run, error) {
	r := *rp
	if r.Version == 0 {
		return nil, fmt.Errorf("%s:1: not an apiperf run document (no version)", name)
	}
	if r.Version > Version {
		return nil, fmt.Errorf("%s:1: run document version %d is newer than this apiperf reads (%d)", name, r.Version, Version)
	}
	for i, s := range r.Steps {
		if s == nil || s.Latency == nil {
			return nil, fmt.Errorf("%s:%d: step %d has no latency histogram", name, lineOf(data, stepOffset(data, i)), i+1)
		}
	}
	return &r, nil
}

// Load reads a run document from a file or a run directory holding run.json. Its steps are
// decoded one at a time as the file is read (load.go), so the document is not held whole
// beside what it decodes to; one that does not read so is read whole by Decode, which says
// what is wrong and where.
func Load(path string) (*Run, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "run.json")
	}
	if r := loadSteps(path); r != nil {
		return r, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Decode(path, data)
}

func lineOf(data []byte, off int64) int {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	return 1 + strings.Count(string(data[:off]), "\n")
}

// stepOffset finds roughly where step i starts, for error messages.
func stepOffset(data []byte, i int) int64 {
	s := string(data)
	at := strings.Index(s, `"steps"`)
	for k := 0; k <= i && at >= 0; k++ {
		next := strings.Index(s[at+1:], `"label"`)
		if next < 0 {
			break
		}
		at += next + 1
	}
	if at < 0 {
		return 0
	}
	return int64(at)
}
