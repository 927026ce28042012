package result

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/cluster"
	"github.com/apiperf/apiperf/conditions"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/procfs"
	"github.com/apiperf/apiperf/profcap"
	"github.com/apiperf/apiperf/scenario"
	"github.com/apiperf/apiperf/sweep"
	"github.com/apiperf/apiperf/verdict"
)

func fp(v float64) *float64 { return &v }

// TestVerdictInput checks what the verdict reads of a run: errors summed over a level's
// steps, apiperf's cores and run-queue wait, /proc preferred over metrics for CPU, goroutines' rise within
// the window, and wait sites with the server's idle goroutines left out.
func TestVerdictInput(t *testing.T) {
	step := func(label string, conc int, requests int64) *measure.Step {
		return &measure.Step{Label: label, Concurrency: conc, Attempts: 1000, Requests: requests, Elapsed: measure.Duration(time.Second), Errors: measure.Errors{Timeout: 20},
			Generator: &measure.Generator{CPU: measure.Duration(time.Second), Wall: measure.Duration(2 * time.Second), Cores: 2, MachineCPUs: 4, RunWait: measure.Duration(600 * time.Millisecond)}}
	}
	r := &Run{
		Scenario: scenario.Scenario{URL: "http://127.0.0.1:8080/demo/pool"},
		Steps:    []*measure.Step{step("c=4", 4, 700), step("c=16", 16, 790)},
		Sweep:    sweep.NewRecord(sweep.Plan{Levels: []int{4, 16}}, sweep.Objective{}, sweep.Rules{}),
		Target: &profcap.Record{Steps: []profcap.StepRecord{{
			Label:          "c=16",
			Summary:        &profcap.Summary{From: 0, To: 3 * time.Second, Points: 3, CPUCores: &profcap.Stat{Mean: 0.9}},
			ProcessSummary: &profcap.Summary{Points: 3, CPUCores: &profcap.Stat{Mean: 0.25}, RSSBytes: &profcap.Stat{Max: 30 << 20}},
			Process:        &profcap.Series{Cores: 2},
			Series: &profcap.Series{Points: []profcap.Point{
				{Offset: time.Second, Goroutines: fp(40)}, {Offset: 2 * time.Second, Goroutines: fp(41)}, {Offset: 4 * time.Second, Goroutines: fp(90)},
			}},
			Profiles: &profcap.Analysis{Waits: &profcap.Waits{Total: 40, Idle: 20, Sites: []profcap.WaitSite{
				{Function: "sync.(*Cond).Wait", Caller: "main.get", Reason: "cond", Count: 12},
			}}},
		}}},
	}
	r.Sweep.Analyze(r.Steps)
	in, ok := r.VerdictInput()
	if !ok || len(in.Levels) != 2 || in.Peak != 1 || in.MachineCores != 4 || !in.SameMachine {
		t.Fatalf("VerdictInput = %+v, %v; want 2 levels, peak 1, 4 machine cores, same machine", in, ok)
	}
	l := in.Levels[1]
	if l.Errors.Timeout != 20 || l.Attempts != 1000 || l.Generator == nil || l.Generator.CPUCores != 0.5 || l.Generator.Cores != 2 || l.Generator.RunWaitCores != 0.3 {
		t.Errorf("level c=16: errors %+v attempts %d generator %+v; want 20 timeouts of 1000, 0.5 of 2 cores, 0.3 cores waiting", l.Errors, l.Attempts, l.Generator)
	}
	if u := l.Target; u == nil || u.CPUCores != 0.25 || u.Cores != 2 || u.RSSBytes != 30<<20 || u.Goroutines != 41 || u.GoroutineRise != 1 {
		t.Errorf("level c=16 target = %+v; want /proc CPU 0.25 of 2 cores, RSS 30 MiB, 41 goroutines risen by 1 in the window", u)
	}
	if p := l.Profile; p == nil || p.Goroutines != 20 || len(p.Waits) != 1 || p.Waits[0].Site != "sync.(*Cond).Wait from main.get" {
		t.Errorf("level c=16 profile = %+v; want 20 busy goroutines, 12 in sync.(*Cond).Wait from main.get", p)
	}
	if in.Levels[0].Target != nil {
		t.Errorf("level c=4 target = %+v, want nil (nothing captured)", in.Levels[0].Target)
	}
}

// The target's outbound connections name the downstream of http.Transport waits: the one
// address it held connections to, a database's usual port left out; and the machine's CPU
// and the capacity probes' order reach the verdict.
func TestVerdictInputDownstreamAndMachine(t *testing.T) {
	site := profcap.WaitSite{Function: "net/http.(*Transport).getConn", What: "http.Transport: waiting for a connection to the downstream (MaxConnsPerHost, or a slow dial)",
		Caller: "main.fetch", Reason: "pool", Count: 30}
	peers := []procfs.Peer{{Addr: netip.MustParseAddrPort("127.0.0.1:5432"), Conns: 5}, {Addr: netip.MustParseAddrPort("127.0.0.1:9001"), Conns: 4}}
	r := &Run{
		Scenario: scenario.Scenario{URL: "http://127.0.0.1:8080/x"},
		Steps:    []*measure.Step{{Label: "c=4", Concurrency: 4, Attempts: 100, Requests: 100, Elapsed: measure.Duration(time.Second)}},
		Sweep:    sweep.NewRecord(sweep.Plan{Levels: []int{4}}, sweep.Objective{}, sweep.Rules{}),
		Target: &profcap.Record{PIDSource: "listening on 127.0.0.1:8080", Steps: []profcap.StepRecord{{Label: "c=4", Outbound: peers,
			Machine:  &procfs.MachineUse{Busy: 1.5, Steal: 0.1, CPUs: 2},
			Profiles: &profcap.Analysis{Waits: &profcap.Waits{Total: 40, Idle: 8, Requests: 32, Sites: []profcap.WaitSite{site}}}}}},
	}
	r.Sweep.Analyze(r.Steps)
	in, _ := r.VerdictInput()
	l := in.Levels[0]
	if want := "http.Transport: waiting for a connection to 127.0.0.1:9001, 4 open (MaxConnsPerHost, or a slow dial) from main.fetch"; l.Profile == nil || l.Profile.Waits[0].Site != want {
		t.Errorf("wait site = %+v, want %q", l.Profile, want)
	}
	if l.Machine == nil || *l.Machine != (verdict.Machine{CPUs: 2, Busy: 1.5, Steal: 0.1}) || in.TargetProcess != "listening on 127.0.0.1:8080" {
		t.Errorf("machine %+v, target process %q; want 1.5 of 2 busy, 0.1 stolen, found listening", l.Machine, in.TargetProcess)
	}
	r.Capacity = &sweep.Capacity{Probes: []sweep.Probe{{Rate: 100}, {Rate: 50}, {Rate: 100}}}
	r.Sweep.Levels = []sweep.Level{{Value: 50}, {Value: 100}}
	if got := r.probeOrder(); !slices.Equal(got, []int{1, 0}) {
		t.Errorf("probeOrder = %v, want [1 0]", got)
	}
}

// TestVerdictInputWorkers: a scaled-out run's health record gives every level each worker's
// own generator (named with its host), the limit it hit and what others took of its machine;
// a run of one machine has none.
func TestVerdictInputWorkers(t *testing.T) {
	step := func(label string, conc int) *measure.Step {
		return &measure.Step{Label: label, Concurrency: conc, Attempts: 1000, Requests: 1000, Elapsed: measure.Duration(time.Second)}
	}
	gen := func(cpu time.Duration) *measure.Generator {
		return &measure.Generator{CPU: measure.Duration(cpu), Wall: measure.Duration(time.Second), Cores: 1}
	}
	r := &Run{
		Steps: []*measure.Step{step("c=4", 4), step("c=16", 16)},
		Sweep: sweep.NewRecord(sweep.Plan{Levels: []int{4, 16}}, sweep.Objective{}, sweep.Rules{}),
	}
	r.Sweep.Analyze(r.Steps)
	if in, _ := r.VerdictInput(); in.Levels[0].Workers != nil {
		t.Errorf("one machine: workers %+v; want none", in.Levels[0].Workers)
	}
	r.Cluster = &cluster.Record{Version: cluster.RecordVersion, Workers: 2,
		Shares: []cluster.WorkerReport{{Worker: 1, Host: "gen-a"}, {Worker: 2, Host: "gen-b"}},
		Steps: []cluster.StepHealth{{Label: "c=16", Workers: []cluster.Health{
			{Worker: 1, Generator: gen(300 * time.Millisecond), Conditions: &conditions.StepSample{Others: 0.5}},
			{Worker: 2, Generator: gen(950 * time.Millisecond), Limit: &measure.GeneratorLimit{Errno: "EMFILE", Resource: "open files", Connections: 3, Wanted: 8}},
		}}}}
	in, _ := r.VerdictInput()
	ws := in.Levels[1].Workers
	if in.Levels[0].Workers != nil || len(ws) != 2 || ws[0].Name != "worker 1 (gen-a)" || ws[0].Others != 0.5 || ws[1].Generator.CPUCores != 0.95 ||
		!strings.HasPrefix(ws[1].GeneratorLimit, "open files exhausted (EMFILE) at 3 of 8") {
		t.Errorf("levels' workers %+v and %+v; want none at c=4, at c=16 worker 1 (gen-a) with others 0.5 and worker 2 at 0.95 cores, out of open files", in.Levels[0].Workers, ws)
	}
}
