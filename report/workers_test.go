package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/cluster"
	"github.com/apiperf/apiperf/conditions"
	"github.com/apiperf/apiperf/internal/golden"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/result"
)

// The workers table is rendered from the record alone, after a round trip through JSON as
// `apiperf report` reads it from run.json.
func TestWorkersTable(t *testing.T) {
	rec := &cluster.Record{Workers: 2, StartSpread: 1200 * time.Microsecond, Shares: []cluster.WorkerReport{
		{Worker: 1, Host: "gen-a", Connections: 10, Offset: 300 * time.Microsecond, RTT: 150 * time.Microsecond, Responses: 10000, Errors: 2, QPS: 1000.04},
		{Worker: 2, Host: "gen-b", Connections: 10, Offset: -40 * time.Microsecond, RTT: 90 * time.Microsecond, StartLag: 1200 * time.Microsecond, Responses: 4000, QPS: 400,
			Lost: "lost at 4s: connection reset"},
	}}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	var back cluster.Record
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Workers(&out, &back); err != nil {
		t.Fatalf("Workers = %v; want nil", err)
	}
	golden.Check(t, "workers_table.golden", out.Bytes())
}

// A record with the workers' health (version 2) marks the generator-limited and the
// generator-bound workers in the table and gives their reasons, errors by class and
// machines below it; a record of version 1 (above) shows "-" for what it lacks.
func TestWorkersHealthTable(t *testing.T) {
	gen := func(cpu, wait time.Duration) *measure.Generator {
		return &measure.Generator{CPU: measure.Duration(cpu), Wall: measure.Duration(time.Second), RunWait: measure.Duration(wait), Cores: 2, MachineCPUs: 2}
	}
	machine := &conditions.Generator{Apiperf: "v1.0.0", GoVersion: "go1.26.8", CPUModel: "Test CPU", CPUs: 2, GOMAXPROCS: 2, Kernel: "6.1.0", Load: [3]float64{1.5, 1, 1}}
	health := []cluster.Health{
		{Worker: 1, Generator: gen(300*time.Millisecond, 0), Asked: 10, Opened: 10, Conditions: &conditions.StepSample{Others: 0.1, OthersHasTarget: true}},
		{Worker: 2, Generator: gen(200*time.Millisecond, 0), Asked: 10, Opened: 4, Errors: measure.Errors{Read: 3},
			Limit:      &measure.GeneratorLimit{Errno: "EMFILE", Resource: "open files of apiperf's process", Connections: 4, Wanted: 10, Fix: "raise ulimit -n"},
			Conditions: &conditions.StepSample{Others: 0.2, StealPct: 1.5}},
		{Worker: 3, Generator: gen(800*time.Millisecond, 1200*time.Millisecond), Asked: 10, Opened: 10, Conditions: &conditions.StepSample{Others: 1.1}},
	}
	rec := &cluster.Record{Version: cluster.RecordVersion, Workers: 3, StartSpread: time.Millisecond,
		Steps: []cluster.StepHealth{{Label: "c=30", Workers: health}}}
	for k := range health {
		rec.Shares = append(rec.Shares, cluster.WorkerReport{Worker: k + 1, Host: fmt.Sprintf("gen-%d", k+1), Connections: 10, Responses: 1000, QPS: 100,
			Machine: machine, Health: &health[k]})
	}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	var back cluster.Record
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Workers(&out, &back); err != nil {
		t.Fatalf("Workers = %v; want nil", err)
	}
	golden.Check(t, "workers_health.golden", out.Bytes())
}

// A scaled-out run's report.html has the workers table, host names escaped; a run of one
// machine has no such section.
func TestWorkersHTML(t *testing.T) {
	r := &result.Run{Cluster: &cluster.Record{Workers: 1, Shares: []cluster.WorkerReport{{Worker: 1, Host: "<script>x</script>", Connections: 2}}}}
	s := workersSections(r)
	if len(s) != 1 || !strings.Contains(string(s[0].Body), "&lt;script&gt;x&lt;/script&gt;") || strings.Contains(string(s[0].Body), "<script>") {
		t.Errorf("workersSections = %+v; want one section with the host escaped", s)
	}
	if s := workersSections(&result.Run{}); s != nil {
		t.Errorf("one machine: workersSections = %+v; want none", s)
	}
}
