package conditions

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func quietMachine() *Record {
	return &Record{Version: Version, Generator: Generator{Apiperf: "v1.2.0", GoVersion: "go1.26.8", CPUModel: "Intel(R) Xeon(R) Processor",
		CPUs: 2, Kernel: "6.1.0", GOMAXPROCS: 2, Threads: 2},
		Steps: []StepSample{{Label: "c=10", Seconds: 10, Busy: 1.2, Apiperf: 0.6, Others: 0.05, OthersMax: 0.1, Samples: 10}}}
}

func TestOff(t *testing.T) {
	tests := []struct {
		name string
		edit func(r *Record)
		want []string // substrings of Off's lines, in order; nil: nothing off
	}{
		// A quiet machine: nothing is off, so the text output prints nothing new.
		{"quiet", func(r *Record) {}, nil},
		// Exactly a quarter of a core is not more than a quarter.
		{"at threshold", func(r *Record) { r.Steps[0].Others = 0.25 }, nil},
		// Another process took a core: named, with the step.
		{"busy", func(r *Record) { r.Steps[0].Others, r.Steps[0].OthersMax = 1.02, 1.3 }, []string{"other processes took 1.02 cores (max 1.30) during c=10"}},
		// Steal above 5%.
		{"steal", func(r *Record) { r.Steps[0].StealPct = 7.5 }, []string{"steal was 7.5% during c=10"}},
		// Others that include the target (its PID unknown) are not called busy.
		{"target unknown", func(r *Record) { r.Steps[0].Others, r.Steps[0].OthersHasTarget = 1.5, true }, nil},
		// A powersave governor.
		{"powersave", func(r *Record) { r.Generator.Governor = "powersave" }, []string{"governor is powersave"}},
		// A cgroup quota of 1.5 cores under GOMAXPROCS 2.
		{"quota", func(r *Record) { r.Generator.CPULimit = 1.5 }, []string{"allows 1.5 cores, fewer than the 2"}},
		// A quota of 2 cores for GOMAXPROCS 2 is enough.
		{"quota enough", func(r *Record) { r.Generator.CPULimit = 2 }, nil},
		// A -race target, after a busy machine.
		{"race and busy", func(r *Record) {
			r.Target = &Target{Build: &Build{Race: true}}
			r.Steps = append(r.Steps, StepSample{Label: "c=20", Others: 0.9, OthersMax: 1})
		}, []string{"during c=20 (1 of 2 steps", "built with -race"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := quietMachine()
			tt.edit(r)
			got := r.Off(DefaultThresholds)
			if len(got) != len(tt.want) {
				t.Fatalf("Off = %q, want %d lines like %q", got, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("Off[%d] = %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
	var none *Record
	if none.Off(DefaultThresholds) != nil || none.String() != Unknown {
		t.Errorf("a nil record: Off %q, String %q; want nothing and %q", none.Off(DefaultThresholds), none.String(), Unknown)
	}
}

func TestCompare(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(b *Record)
		machine string // the "not comparable" fields, joined; "" comparable
		build   string
	}{
		// Same machine and build: comparable, nothing changed.
		{"same", func(b *Record) {}, "", ""},
		// Another CPU: not comparable, naming the CPU.
		{"cpu", func(b *Record) { b.Generator.CPUModel = "AMD EPYC 7763" },
			"CPU model (A: Intel(R) Xeon(R) Processor, B: AMD EPYC 7763)", ""},
		// More CPUs, another kernel and GOMAXPROCS: each named.
		{"cpus kernel", func(b *Record) { b.Generator.CPUs, b.Generator.Kernel, b.Generator.GOMAXPROCS = 4, "6.8.0", 4 },
			"logical CPUs (A: 2, B: 4); kernel (A: 6.1.0, B: 6.8.0); GOMAXPROCS (A: 2, B: 4)", ""},
		// A new minor version of apiperf compares; a new major does not.
		{"minor", func(b *Record) { b.Generator.Apiperf = "v1.3.1" }, "", ""},
		{"major", func(b *Record) { b.Generator.Apiperf = "v2.0.0" }, "apiperf major version (A: v1, B: v2)", ""},
		// Development builds say nothing of their version: not a difference.
		{"devel", func(b *Record) { b.Generator.Apiperf = "(devel) rev 1a2b3c" }, "", ""},
		// The target's build changed: shown as what changed, not as incomparable.
		{"build", func(b *Record) {
			b.Target = &Target{Build: &Build{GoVersion: "go1.26.8", Revision: "4d5e6f0000000000000", Modified: true, Settings: map[string]string{"GOAMD64": "v3"}}}
		}, "", "revision (A: 1a2b3c000000, B: 4d5e6f000000 (modified)); GOAMD64 (A: unset, B: v3)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := quietMachine(), quietMachine()
			a.Target = &Target{Build: &Build{GoVersion: "go1.26.8", Revision: "1a2b3c0000000000000"}}
			b.Target = &Target{Build: &Build{GoVersion: "go1.26.8", Revision: "1a2b3c0000000000000"}}
			tt.edit(b)
			c := Compare(a, b, DefaultThresholds)
			if got := joinDiffs(c.Machine, "A", "B"); got != tt.machine {
				t.Errorf("machine differences = %q, want %q", got, tt.machine)
			}
			if got := joinDiffs(c.Build, "A", "B"); got != tt.build {
				t.Errorf("build differences = %q, want %q", got, tt.build)
			}
			if c.Comparable() != (tt.machine == "") {
				t.Errorf("Comparable() = %v with differences %q", c.Comparable(), tt.machine)
			}
			lines := strings.Join(c.Lines("A", "B"), "\n")
			if (tt.machine != "") != strings.Contains(lines, "not comparable: the generators' machines differ: "+tt.machine) {
				t.Errorf("Lines() = %q: want \"not comparable\" exactly when the machines differ (%q)", lines, tt.machine)
			}
		})
	}
}

// A run without a record compares with one that has it: the side is named unknown,
// nothing is called incomparable, and its line says why.
func TestCompareUnknown(t *testing.T) {
	c := Compare(nil, quietMachine(), DefaultThresholds)
	if !reflect.DeepEqual(c.Unknown, []string{"A"}) || !c.Comparable() || c.A != Unknown {
		t.Errorf("Compare(nil, rec) = %+v, want A unknown and comparable", c)
	}
	busy := quietMachine()
	busy.Steps[0].Others = 1
	c = Compare(nil, busy, DefaultThresholds)
	if w := c.Warnings("A", "B"); len(w) != 1 || !strings.HasPrefix(w[0], "busy machine on B: other processes took 1.00 cores") {
		t.Errorf("Warnings = %q, want B's busy machine", w)
	}
}

func TestRecordRoundTrip(t *testing.T) {
	r := quietMachine()
	tc := 0.8
	r.Steps[0].Target = &tc
	r.Target = &Target{PID: 42, Found: "listening on 127.0.0.1:8080", Build: &Build{GoVersion: "go1.26.8", Race: true, Settings: map[string]string{"GOAMD64": "v1"}}, Cmdline: []string{"svc"}}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back Record
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r, &back) {
		t.Errorf("round trip of %s:\ngot  %+v\nwant %+v", b, back, *r)
	}
}

func TestFromCmdline(t *testing.T) {
	body := "/usr/bin/svc\x00-port=8080\x00-token=s3cret\x00--password\x00hunter2\x00-v\x00-db=postgres://u:pw@127.0.0.1/x\x00-mine=x\x00" +
		"-header\x00Authorization: Bearer b\x00-requirepass\x00rp\x00TOKEN=t\x00"
	tg := FromCmdline([]byte(body), []string{"mine"})
	want := []string{"/usr/bin/svc", "-port=8080", "-token=REDACTED", "--password", "REDACTED", "-v", "-db=postgres://u:REDACTED@127.0.0.1/x", "-mine=REDACTED",
		"-header", "Authorization: REDACTED", "-requirepass", "REDACTED", "TOKEN=REDACTED"}
	if tg == nil || !reflect.DeepEqual(tg.Cmdline, want) || tg.Found != "pprof cmdline" {
		t.Errorf("FromCmdline(%q) = %+v, want cmdline %q", body, tg, want)
	}
	if FromCmdline(nil, nil) != nil {
		t.Error("FromCmdline of an empty body: want nil")
	}
}

func TestGOMAXPROCSDefault(t *testing.T) {
	tests := []struct {
		goVersion string
		cpus      int
		limit     float64
		want      int
	}{
		{"go1.26.8", 8, 0, 8},   // no limit: the CPUs
		{"go1.26.8", 8, 2.5, 3}, // Go 1.25+: the limit rounded up
		{"go1.26.8", 8, 0.5, 2}, // ... at least 2
		{"go1.24.3", 8, 2.5, 8}, // before 1.25 the cgroup limit is ignored
		{"go1.26.8", 1, 2.5, 1}, // never more than the CPUs
	}
	for _, tt := range tests {
		if got, from := gomaxprocs(1<<30, tt.goVersion, tt.cpus, tt.limit); got != tt.want || from != "default" {
			t.Errorf("gomaxprocs(%s, %d CPUs, limit %v) = %d from %q, want %d by default", tt.goVersion, tt.cpus, tt.limit, got, from, tt.want)
		}
	}
}

func TestMatch(t *testing.T) {
	r := quietMachine()
	r.Target = &Target{Build: &Build{GoVersion: "go1.26.8", Revision: "1a2b3c4d", Race: true}}
	tests := []struct {
		rec        *Record
		key, value string
		want       bool
	}{
		{r, "cpu", "xeon", true},                                  // a part of the model, without case
		{r, "cpu", "EPYC", false},                                 // another CPU
		{r, "cpus", "2", true},                                    // exact count
		{r, "kernel", "6.1", true},                                // release prefix
		{r, "gomaxprocs", "4", false},                             // exact
		{r, "apiperf", "v1.", true},                               // version prefix
		{r, "rev", "1a2b", true},                                  // revision prefix
		{r, "rev", "", false},                                     // an empty prefix selects nothing
		{r, "go", "go1.26.8", true},                               // the target's Go version
		{r, "race", "true", true},                                 // a -race target
		{r, "busy", "false", true},                                // a quiet machine
		{r, "known", "true", true},                                // has conditions
		{nil, "known", "false", true},                             // an older run
		{nil, "cpu", "xeon", false},                               // an older run matches nothing else
		{nil, "busy", "false", false},                             // not even "not busy": unknown
		{&Record{Generator: r.Generator}, "busy", "false", false}, // no step measured: unknown
		{&Record{Generator: r.Generator, Steps: []StepSample{{Label: "c=10", Others: 0.05, OthersHasTarget: true}}}, "busy", "false", false},            // others held the target: unknown
		{&Record{Generator: r.Generator, Steps: []StepSample{{Label: "c=10", Others: 0.05, OthersHasTarget: true, StealPct: 9}}}, "busy", "true", true}, // steal tells busy all the same
		{r, "nonsense", "x", false}, // unknown keys match nothing (CheckKey rejects them first)
	}
	for _, tt := range tests {
		if got := tt.rec.Match(tt.key, tt.value); got != tt.want {
			t.Errorf("Match(%s=%s) on %v = %v, want %v", tt.key, tt.value, tt.rec != nil, got, tt.want)
		}
	}
	if CheckKey("cpu") != nil || CheckKey("nonsense") == nil {
		t.Error("CheckKey accepts cpu and rejects nonsense: not so")
	}
}

func TestChanged(t *testing.T) {
	a, b := quietMachine(), quietMachine()
	if got := Changed(a, b); len(got) != 0 {
		t.Errorf("Changed of equal records = %q, want nothing", got)
	}
	b.Generator.Kernel = "6.8.0"
	b.Target = &Target{Build: &Build{Revision: "4d5e"}}
	a.Target = &Target{Build: &Build{Revision: "1a2b"}}
	if got := Changed(a, b); !reflect.DeepEqual(got, []string{"kernel", "target revision"}) {
		t.Errorf("Changed = %q, want kernel and target revision", got)
	}
	if got := Changed(nil, b); len(got) != 1 || Changed(nil, nil) != nil {
		t.Errorf("Changed(nil, rec) = %q, Changed(nil, nil) = %q; want one line and nothing", got, Changed(nil, nil))
	}
}

// The generator's line names apiperf's Go version once: a build's version string (as
// `apiperf version` prints it) carries it already.
func TestGeneratorStringGoOnce(t *testing.T) {
	g := quietMachine().Generator
	for _, tt := range []struct{ apiperf, want string }{
		{"v1.2.0", "; apiperf v1.2.0 (go1.26.8)"},                                                      // a release: Go added
		{"(devel), rev 1a2b3c4d5e6f 2026-11-27T10:00:00Z, go1.26.8", "2026-11-27T10:00:00Z, go1.26.8"}, // a checkout's build: once
	} {
		g.Apiperf = tt.apiperf
		s := g.String()
		if !strings.HasSuffix(s, tt.want) || strings.Count(s, "go1.26.8") != 1 {
			t.Errorf("Generator{Apiperf: %q}.String() = %q; want it to end %q, Go named once", tt.apiperf, s, tt.want)
		}
	}
}
