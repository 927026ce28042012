package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/internal/golden"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/sweep"
)

// genLimitedSweep is a sweep whose c=1000 was short of CPU (generator-bound) and whose
// c=1500 opened only 1000 connections (generator-limited) while serving the most.
func genLimitedSweep() *result.Run {
	mk := func(c int, qps float64) *measure.Step {
		s := synthStep(c, qps, 2*time.Millisecond, measure.Errors{}, 0)
		s.Generator = &measure.Generator{CPU: measure.Duration(2 * time.Second), Wall: measure.Duration(10 * time.Second), Cores: 2}
		return s
	}
	steps := []*measure.Step{mk(500, 9000), mk(1000, 9500), mk(1500, 9800)}
	steps[1].Generator.CPU = measure.Duration(19 * time.Second) // 1.9 of its 2 cores
	steps[2].GeneratorLimit = &measure.GeneratorLimit{Errno: "EADDRNOTAVAIL", Resource: "local ports", Connections: 1000, Wanted: 1500,
		Fix: "spread connections over more source addresses with --source, or widen net.ipv4.ip_local_port_range"}
	obj, _ := sweep.ParseObjective(sweep.DefaultObjective)
	r := &result.Run{Version: result.Version, Kind: result.KindSweep, Name: "genlimit", Steps: steps,
		Start: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), End: time.Date(2026, 1, 2, 3, 5, 5, 0, time.UTC),
		Sweep: sweep.NewRecord(sweep.Plan{Levels: []int{500, 1000, 1500}}, obj, sweep.DefaultRules)}
	r.Sweep.Analyze(r.Steps)
	r.Sweep.Stop = sweep.GeneratorLimitStop(r.Sweep.Levels, "c=1500")
	return r
}

// TestGeneratorLimitedEverywhere proves a generator-limited level says so in the table, the
// .dat (a comment line), report.html and the text of its step, and is not the peak.
func TestGeneratorLimitedEverywhere(t *testing.T) {
	r := genLimitedSweep()
	if r.Sweep.Peak != 1 {
		t.Fatalf("peak %d, want 1 (c=1000): the generator-limited c=1500 is never the peak", r.Sweep.Peak)
	}
	var b bytes.Buffer
	SweepTable(&b, r)
	golden.Check(t, "genlimit_table.golden", b.Bytes())

	b.Reset()
	if err := WriteDat(&b, r.Sweep.Levels); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "genlimit.dat", b.Bytes())
	back, err := ReadDat("genlimit.dat", bytes.NewReader(b.Bytes()))
	if err != nil || len(back) != 3 {
		t.Errorf("ReadDat of the written .dat: %d levels, %v; want 3 (the comment skipped)", len(back), err)
	}

	b.Reset()
	if err := HTML(&b, r); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{"generator-limited: local ports ran out at 1000 of 1500 connections", "generator-bound (apiperf short of CPU)"} {
		if !strings.Contains(html, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}

	// A plain run that hit the limit says so in its headline.
	one := &result.Run{Kind: result.KindRun, Steps: []*measure.Step{r.Steps[2]}}
	if h := strings.Join(Headline(one), "\n"); !strings.Contains(h, "Generator-limited: local ports exhausted (EADDRNOTAVAIL) at 1000 of 1500") {
		t.Errorf("Headline of a limited run = %q; want the limit named", h)
	}

	b.Reset()
	Text(&b, r, r.Steps[2], TextOptions{})
	Text(&b, r, r.Steps[1], TextOptions{})
	golden.Check(t, "genlimit_text.golden", b.Bytes())
}
