package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/conditions"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/store"
	"github.com/apiperf/apiperf/target"
)

var variants int

// variant saves a copy of the run at path under dir/name/run.json with its conditions
// changed by edit (the record is never nil in edit); it returns the new path.
func variant(t *testing.T, path, dir, name string, edit func(r *result.Run)) string {
	t.Helper()
	r, err := result.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	edit(r)
	variants++
	r.Start = r.Start.Add(time.Duration(variants) * time.Second) // another run to the history
	out := filepath.Join(dir, name, "run.json")
	if err := r.Save(out); err != nil {
		t.Fatal(err)
	}
	return out
}

// quiet sets every step's other processes' CPU and steal to none: this machine is shared,
// so a test says which case it checks rather than take what the machine did.
func quiet(r *result.Run) {
	for i := range r.Conditions.Steps {
		r.Conditions.Steps[i].Others, r.Conditions.Steps[i].OthersMax, r.Conditions.Steps[i].StealPct = 0, 0, 0
	}
}

// anotherCPU returns the model of a CPU that this machine's (cpu) cannot be taken for by the
// history's cpu= filter (any part of the model, without case): it is one letter that cpu
// lacks, repeated, so neither model holds the other. A model copied from a real machine
// (say "AMD EPYC 7763") matches a host whose model is a part of it ("AMD EPYC").
func anotherCPU(t *testing.T, cpu string) string {
	t.Helper()
	for _, c := range "zqxjkvwybfgmpuhcdlrsntioae" {
		if !strings.ContainsRune(strings.ToLower(cpu), c) {
			return strings.ToUpper(string(c)) + strings.Repeat(string(c), 5)
		}
	}
	t.Fatalf("CPU model %q holds every letter: no model for another machine", cpu)
	return ""
}

// Issue 29's checks of comparisons on real runs: diff and gate say "not comparable" and
// name the CPU when the CPU models differ (gate --strict-conditions exits 2); a busy
// machine is a gate warning, an error with --strict-conditions; a run.json without
// conditions (an older apiperf's) still renders and compares, its conditions unknown.
func TestConditionsInComparisons(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "history.db")
	measured := measureTarget(t, 0, db, dir, "measured") // gate_test.go
	r, err := result.Load(measured)
	if err != nil || r.Conditions == nil || r.Conditions.Generator.CPUModel == "" || len(r.Conditions.Steps) != 5 {
		t.Fatalf("run.json of apiperf run --count 5: %v; conditions %+v: want a CPU model and 5 steps", err, r.Conditions)
	}
	cpu := r.Conditions.Generator.CPUModel
	otherCPU := anotherCPU(t, cpu)
	base := variant(t, measured, dir, "base", quiet)
	same := variant(t, measured, dir, "same", quiet)
	other := variant(t, measured, dir, "other", func(r *result.Run) { quiet(r); r.Conditions.Generator.CPUModel = otherCPU })
	busy := variant(t, measured, dir, "busy", func(r *result.Run) {
		quiet(r)
		r.Conditions.Steps[2].Others, r.Conditions.Steps[2].OthersMax = 1.0, 1.1
	})
	old := variant(t, measured, dir, "old", func(r *result.Run) { r.Conditions = nil })

	wantCPU := "CPU model (base: " + cpu + ", other: " + otherCPU + ")"
	code, stdout, stderr := runCLI(t, "diff", "--dir", filepath.Join(dir, "diff"), "--name-a", "base", "--name-b", "other", base, other)
	if code != ExitOK || !strings.Contains(stdout, "not comparable: the generators' machines differ: "+wantCPU) {
		t.Errorf("apiperf diff of runs on different CPUs = %d\n%s\n%s\nwant \"not comparable\" naming %q", code, stdout, stderr, wantCPU)
	}
	if !strings.Contains(stdout, "conditions base: "+cpu) || !strings.Contains(stdout, "conditions other: "+otherCPU) {
		t.Errorf("apiperf diff does not print both sides' conditions:\n%s", stdout)
	}

	gate := func(cur string, more ...string) (int, string, string) {
		return runCLI(t, append([]string{"gate", "--baseline", base, "--current", cur}, more...)...)
	}
	// Same machine, quiet: no warning, and --strict-conditions passes.
	code, stdout, stderr = gate(same, "--strict-conditions")
	if code != ExitOK || strings.Contains(stdout, "not comparable") || strings.Contains(stdout, "busy machine") {
		t.Errorf("gate --strict-conditions of a run against its copy = %d\n%s\n%s\nwant 0 without condition warnings", code, stdout, stderr)
	}
	wantCPU = "CPU model (baseline: " + cpu + ", current: " + otherCPU + ")"
	code, stdout, stderr = gate(other)
	if code != ExitOK || !strings.Contains(stdout, "warning: not comparable: the generators' machines differ: "+wantCPU) {
		t.Errorf("gate against a run on another CPU = %d\n%s\n%s\nwant a pass (same numbers) warning \"not comparable\" naming %q", code, stdout, stderr, wantCPU)
	}
	code, _, stderr = gate(other, "--strict-conditions")
	if code != ExitUsage || !strings.Contains(stderr, "--strict-conditions: not comparable") || !strings.Contains(stderr, otherCPU) {
		t.Errorf("gate --strict-conditions against a run on another CPU = %d, stderr %q; want 2 naming the CPU", code, stderr)
	}
	code, stdout, _ = gate(busy)
	if code != ExitOK || !strings.Contains(stdout, "warning: busy machine on current: other processes took 1.00 cores (max 1.10) during c=4 #3") {
		t.Errorf("gate against a run with a busy step = %d\n%s\nwant a pass warning of the busy machine", code, stdout)
	}
	if code, _, stderr = gate(busy, "--strict-conditions"); code != ExitUsage || !strings.Contains(stderr, "busy machine on current") {
		t.Errorf("gate --strict-conditions against a busy run = %d, stderr %q; want 2", code, stderr)
	}

	// An older run.json: compares, renders, says its conditions are unknown.
	code, stdout, stderr = runCLI(t, "diff", "--dir", filepath.Join(dir, "diff"), "--name-a", "base", "--name-b", "old", base, old)
	if code != ExitOK || !strings.Contains(stdout, "conditions old: "+conditions.Unknown) || strings.Contains(stdout, "not comparable") {
		t.Errorf("apiperf diff with a run without conditions = %d\n%s\n%s\nwant its conditions unknown, nothing incomparable", code, stdout, stderr)
	}
	if code, stdout, stderr = gate(old, "--strict-conditions"); code != ExitOK || !strings.Contains(stdout, "conditions current: "+conditions.Unknown) {
		t.Errorf("gate --strict-conditions against a run without conditions = %d\n%s\n%s\nwant a pass saying its conditions are unknown", code, stdout, stderr)
	}
	if code, _, stderr = runCLI(t, "report", old); code != ExitOK {
		t.Fatalf("apiperf report of a run without conditions = %d: %s", code, stderr)
	}
	page, err := os.ReadFile(filepath.Join(filepath.Dir(old), "report.html"))
	if err != nil || !strings.Contains(string(page), conditions.Unknown) {
		t.Errorf("report.html of a run without conditions (%v) does not say they are unknown", err)
	}

	// The history keeps the conditions: list filters by them, trend marks their changes.
	for _, d := range []string{"base", "same", "other", "busy", "old"} {
		if code, _, stderr := runCLI(t, "history", "import", "--db", db, filepath.Join(dir, d)); code != ExitOK {
			t.Fatalf("history import %s = %d: %s", d, code, stderr)
		}
	}
	names := func(args ...string) []string {
		t.Helper()
		code, stdout, stderr := runCLI(t, append([]string{"history", "list", "--json", "--db", db}, args...)...)
		if code != ExitOK {
			t.Fatalf("history list %v = %d: %s", args, code, stderr)
		}
		var entries []store.Entry
		if err := json.Unmarshal([]byte(stdout), &entries); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range entries {
			out = append(out, filepath.Base(filepath.Dir(e.Source)))
		}
		return out
	}
	// The run measured here (recorded by run, no source: ".") was busy or not, as this shared
	// machine was; the copies say which case they are.
	busyRuns := "busy"
	if r.Conditions.Busy(conditions.DefaultThresholds) != "" {
		busyRuns = ". busy"
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--condition", "cpu=" + strings.ToUpper(otherCPU[2:5])}, "other"}, // a part, without case
		{[]string{"--condition", "known=false"}, "old"},
		{[]string{"--condition", "busy=true", "--condition", "cpu=" + cpu}, busyRuns},
		{[]string{"--condition", "cpu=" + cpu, "--limit", "1"}, "busy"}, // the newest on this CPU
	} {
		if got := strings.Join(names(tt.args...), " "); got != tt.want {
			t.Errorf("history list %v lists %q, want %q", tt.args, got, tt.want)
		}
	}
	if code, _, stderr := runCLI(t, "history", "list", "--db", db, "--condition", "colour=red"); code != ExitUsage || !strings.Contains(stderr, "unknown conditions field") {
		t.Errorf("history list --condition colour=red = %d, %q; want 2 naming the field", code, stderr)
	}
	code, stdout, stderr = runCLI(t, "history", "trend", "--db", db, "--metric", "qps", "--dir", filepath.Join(dir, "trend"))
	want := []string{": CPU model", ": conditions known on one side only"}
	for _, w := range want {
		if code != ExitOK || !strings.Contains(stdout, "conditions changed: ") || !strings.Contains(stdout, w) {
			t.Errorf("history trend = %d\n%s\n%s\nwant a line \"conditions changed: ...%s\"", code, stdout, stderr, w)
		}
	}
	if n := strings.Count(stdout, "conditions changed: "); n != 3 {
		t.Errorf("history trend marks %d condition changes, want 3 (to another CPU, back, to unknown):\n%s", n, stdout)
	}
}

// ab records both sides' conditions, step by step, and prints them; gate --ab over the saved
// runs warns of a busy side and fails on it with --strict-conditions.
func TestABConditions(t *testing.T) {
	a, b := startTarget(t, target.Config{}), startTarget(t, target.Config{}) // ab_test.go
	dir := t.TempDir()
	code, stdout, stderr := runCLI(t, "ab", "-c2", "-t1", "-d150ms", "--warmup", "50ms", "--count", "7", "--max-pairs", "7", "-q", "-o", dir, a+"/healthz", b+"/healthz")
	if code != ExitOK && code != ExitFailed && code != ExitInconclusive { // two equal targets: any verdict of the noise

		t.Fatalf("apiperf ab = %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "conditions A: ") || !strings.Contains(stdout, "conditions B: ") {
		t.Errorf("apiperf ab does not print both sides' conditions:\n%s", stdout)
	}
	for _, side := range []string{"a.json", "b.json"} {
		r, err := result.Load(filepath.Join(dir, side))
		if err != nil {
			t.Fatal(err)
		}
		c := r.Conditions
		if c == nil || len(c.Steps) != 7 || c.Step("c=2", 6) == nil || c.Target == nil || c.Target.PID != os.Getpid() {
			t.Fatalf("%s: conditions %+v; want 7 measured steps (not the warmups) and the target found listening (this process)", side, c)
		}
	}
	pa := variant(t, filepath.Join(dir, "a.json"), dir, "qa", quiet)
	pb := variant(t, filepath.Join(dir, "b.json"), dir, "qb", func(r *result.Run) { quiet(r); r.Conditions.Steps[0].Others = 0.9 })
	code, stdout, _ = runCLI(t, "gate", "--ab", "--baseline", pa, "--current", pb)
	if !strings.Contains(stdout, "warning: busy machine on current: other processes took 0.90 cores") {
		t.Errorf("gate --ab with a busy side = %d\n%s\nwant a warning of the busy machine", code, stdout)
	}
	if code, _, stderr = runCLI(t, "gate", "--ab", "--strict-conditions", "--baseline", pa, "--current", pb); code != ExitUsage || !strings.Contains(stderr, "busy machine on current") {
		t.Errorf("gate --ab --strict-conditions with a busy side = %d, %q; want 2", code, stderr)
	}
}
