package result

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/internal/liveheap"
	"github.com/apiperf/apiperf/measure"
)

// TestLoadReadsAsDecode: Load, which decodes the steps one at a time as it reads, gives what
// Decode of the whole document gives, the same run or the same error (with its line), for
// current and version 1 documents and for layouts it leaves to Decode: a key that only folds
// to "steps", "steps" twice or not an array, a null step, data after the document.
func TestLoadReadsAsDecode(t *testing.T) {
	good, err := newRun("h", step("c=1", t0, 10, time.Millisecond), step("c=2", t0.Add(time.Second), 20, 3*time.Millisecond)).Encode()
	if err != nil {
		t.Fatal(err)
	}
	one, err := json.Marshal(step("c=10", t0, 1000, 5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	sw := `{"levels": [10, 50], "warmup": "1s", "count": 1, "objective": "p99<=20ms", "points": [{"label": "c=10", "level": 10, "qps": 1000}]}`
	v1 := fmt.Sprintf(`{"version": 1, "kind": "sweep", "steps": [%s, %s], "sweep": %s, "native": {"version": 1, "kind": "sweep", "steps": [%s], "sweep": %s}}`, one, one, sw, one, sw)
	g := string(good)
	cases := []struct {
		name, doc string
		streamed  bool // Load reads it step by step, rather than leaving it to Decode
	}{
		{"a current run", g, true},
		{"a version 1 sweep with its native run, upgraded", v1, true},
		{"no steps at all", `{"version": 2, "steps": []}`, true},
		{"steps before the version", `{"steps": [` + string(one) + `], "version": 2, "kind": "run"}`, true},
		{"a key that folds to steps", strings.Replace(g, `"steps"`, `"Steps"`, 1), false},
		{"steps twice", strings.Replace(g, `"steps": [`, `"steps": [], "steps": [`, 1), false},
		{"steps null", `{"version": 2, "steps": null}`, false},
		{"a null step", `{"version": 2, "steps": [null]}`, false},
		{"steps not an array", `{"version": 2, "steps": 3}`, false},
		{"no steps key", `{"version": 2}`, false},
		{"data after the document", g + `{}`, false},
		{"a syntax error in a step", strings.Replace(g, `"label": "c=2"`, `"label" "c=2"`, 1), false},
		{"a step of the wrong type", strings.Replace(g, `"threads": 1`, `"threads": "one"`, 1), false},
		{"a step without its histogram", strings.Replace(g, `"latency": "HIST`, `"latency_gone": "HIST`, 1), false},
		{"no version", `{"kind": "run", "steps": []}`, false},
		{"from the future", `{"version": 99, "steps": []}`, false},
		{"not an object", `[1, 2]`, false},
	}
	dir := t.TempDir()
	for i, c := range cases {
		path := filepath.Join(dir, fmt.Sprintf("run%d.json", i))
		if err := os.WriteFile(path, []byte(c.doc), 0o644); err != nil {
			t.Fatal(err)
		}
		if streamed := loadSteps(path) != nil; streamed != c.streamed {
			t.Errorf("%s: loadSteps read it step by step: %v, want %v", c.name, streamed, c.streamed)
		}
		got, gerr := Load(path)
		want, werr := Decode(path, []byte(c.doc))
		if fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Errorf("%s: Load = %v, Decode = %v; want the same error", c.name, gerr, werr)
			continue
		}
		if werr != nil {
			continue
		}
		a, aerr := got.Encode()
		b, berr := want.Encode()
		if aerr != nil || berr != nil || !bytes.Equal(a, b) {
			t.Errorf("%s: Load and Decode read different runs (%v, %v):\n%s\n%s", c.name, aerr, berr, a, b)
		}
		if len(got.Steps) != len(want.Steps) || got.Sweep != nil && len(got.Sweep.Levels) != len(want.Sweep.Levels) {
			t.Errorf("%s: Load read %d steps, Decode %d", c.name, len(got.Steps), len(want.Steps))
		}
	}
}

// TestLoadHoldsNotTheDocument: Load of a run.json of a few MB holds little more than the run
// it returns at any time, not the document as well (read whole, it held both at once).
func TestLoadHoldsNotTheDocument(t *testing.T) {
	var steps []*measure.Step
	for i := range 300 {
		s := step(fmt.Sprintf("c=%d", i+1), t0.Add(time.Duration(i)*time.Second), 1, time.Millisecond)
		for k := range 3000 {
			s.Latency.RecordN(time.Duration(20+k*7)*time.Microsecond, int64(1+k%50))
		}
		s.AllAttempts = s.Latency.Clone()
		steps = append(steps, s)
	}
	path := filepath.Join(t.TempDir(), "run.json")
	if err := newRun("h", steps...).Save(path); err != nil {
		t.Fatal(err)
	}
	steps = nil
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := uint64(st.Size())
	var r *Run
	peak, before := liveheap.Peak(func() {
		if r, err = Load(path); err != nil {
			t.Fatal(err)
		}
	})
	kept := liveheap.Now()
	runtime.KeepAlive(r)
	t.Logf("run.json %d KB: live heap %d KB before, at most %d KB while loading, %d KB after", doc>>10, before>>10, peak>>10, kept>>10)
	if over := peak - min(peak, kept); over > doc/2 {
		t.Errorf("Load of a %d KB run.json held %d KB more at its peak than the run it returned; want at most %d KB (half the document: read whole, it is all of it)",
			doc>>10, over>>10, doc>>11)
	}
}
