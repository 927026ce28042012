package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/apiperf/apiperf/compare"
	"github.com/apiperf/apiperf/conditions"
	"github.com/apiperf/apiperf/internal/golden"
)

// synthConditions is a fixed record for rendering (not a measurement): a busy second level,
// a -race target whose command line holds markup.
func synthConditions() *conditions.Record {
	tc := 0.8
	return &conditions.Record{Version: conditions.Version,
		Generator: conditions.Generator{Apiperf: "v1.2.0", GoVersion: "go1.26.8", Arch: "linux/amd64", GOMAXPROCS: 2, Threads: 2,
			CPUModel: "Intel(R) Xeon(R) Processor", CPUs: 2, Kernel: "6.1.0", CPULimit: 1.5, Load: [3]float64{0.5, 0.4, 0.3}},
		Target: &conditions.Target{PID: 4242, Found: "listening on 127.0.0.1:8080", Executable: "/srv/<b>svc</b>",
			Build: &conditions.Build{GoVersion: "go1.26.8", Path: "example.com/svc", Revision: "1a2b3c4d5e6f7a8b9c", Modified: true, Race: true,
				Settings: map[string]string{"GOARCH": "amd64", "GOAMD64": "v3"}},
			GOMAXPROCS: 2, GOMAXPROCSFrom: "default", CPUs: 2, Notes: []string{"<script>alert(1)</script>"}},
		Steps: []conditions.StepSample{
			{Label: "c=10", Seconds: 10, Busy: 1.2, Apiperf: 0.3, Target: &tc, Others: 0.1, OthersMax: 0.2, StealPct: 0.5, RunWait: 0.01, Samples: 10},
			{Label: "c=50", Seconds: 10, Busy: 2, Apiperf: 0.4, Target: &tc, Others: 0.8, OthersMax: 1.1, RunWait: 0.2, Samples: 10},
		}}
}

func TestConditionsSection(t *testing.T) {
	r := synthSweep()
	r.Conditions = synthConditions()
	secs := conditionsSections(r)
	if len(secs) != 1 || secs[0].Title != "Conditions" {
		t.Fatalf("conditionsSections: %+v, want one Conditions section", secs)
	}
	body := string(secs[0].Body)
	golden.Check(t, "conditions_section.html", stripData([]byte(body)))
	for _, bad := range []string{"<script>", "<b>"} {
		if strings.Contains(body, bad) {
			t.Errorf("the Conditions section holds the unescaped %q", bad)
		}
	}
	for _, want := range []string{"other processes took 0.80 cores (max 1.10) during c=50", "built with -race",
		"allows 1.5 cores, fewer than the 2", `id="chart-conditions_busy"`, "<td>c=50</td><td>2.00</td>"} {
		if !strings.Contains(body, want) {
			t.Errorf("the Conditions section lacks %q:\n%s", want, body)
		}
	}
}

// A diff of two runs on different CPUs prints both sides' conditions and says they are
// not comparable, naming the CPU; the build change is shown as what changed.
func TestDiffTextConditions(t *testing.T) {
	a, b := synthSweep(), synthSweep()
	a.Conditions, b.Conditions = synthConditions(), synthConditions()
	b.Conditions.Generator.CPUModel = "AMD EPYC 7763"
	b.Conditions.Target.Build.Revision, b.Conditions.Target.Build.Modified = "4d5e6f708192a3b4c5", false
	var out bytes.Buffer
	if err := DiffText(&out, compare.New(compare.FromRun("before", a), compare.FromRun("after", b))); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"conditions before: Intel(R) Xeon(R) Processor, 2 CPUs",
		"conditions after: AMD EPYC 7763, 2 CPUs",
		"target build changed: revision (before: 1a2b3c4d5e6f (modified), after: 4d5e6f708192)",
		"warning: not comparable: the generators' machines differ: CPU model (before: Intel(R) Xeon(R) Processor, after: AMD EPYC 7763)",
		"warning: busy machine on before: other processes took 0.80 cores",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("DiffText =\n%s\nwant a line containing %q", out.String(), want)
		}
	}
}
