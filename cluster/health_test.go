package cluster

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/sweep"
)

// sickSecond is a RunFunc whose worker 2 hits its machine's open-file limit at 4 of its
// connections and whose worker 3 is short of CPU; worker 1 is healthy. Each does its share.
func sickSecond(_ context.Context, p *Plan, _ func(*measure.Interval)) (*measure.Step, error) {
	s := honestStep(time.Now(), p.Load.Requests, 10*time.Millisecond)
	s.Generator = &measure.Generator{CPU: measure.Duration(100 * time.Millisecond), Wall: measure.Duration(time.Second), Cores: 2, MachineCPUs: 2}
	switch p.Worker {
	case 1:
		s.GeneratorLimit = &measure.GeneratorLimit{Errno: "EMFILE", Resource: "open files of apiperf's process", Connections: 4, Wanted: p.Load.Connections, Fix: "raise ulimit -n"}
	case 2:
		s.Generator.CPU, s.Generator.RunWait = measure.Duration(600*time.Millisecond), measure.Duration(1500*time.Millisecond)
	}
	return s, nil
}

// TestWorkersHealth: every worker's health in a step (its machine, its CPU, the limit it hit,
// the connections it opened of those asked, its errors) reaches the coordinator's record
// under the step's label, worker 2 marked generator-limited and worker 3 generator-bound
// with their reasons; a warmup is not kept; the record survives a JSON round trip.
func TestWorkersHealth(t *testing.T) {
	srv, _ := countingServer(t)
	cl := startCluster(t, srv.URL, 3, sickSecond)
	cfg := load.Config{Connections: 30, Threads: 1, Requests: 30, Timeout: measure.Duration(time.Second)}
	for _, info := range []sweep.StepInfo{{Label: "c=30", Warmup: true}, {Label: "c=30"}, {Label: "c=30", Rep: 1}} {
		done := cl.coord.Hook(context.Background(), info)
		s, err := cl.coord.Step(context.Background(), cfg)
		if err != nil {
			t.Fatalf("Step: %v", err)
		}
		done(s)
	}
	var last *measure.Step
	for _, info := range []sweep.StepInfo{{Label: "c=30", Rep: 2}} {
		done := cl.coord.Hook(context.Background(), info)
		s, err := cl.coord.Step(context.Background(), cfg)
		if err != nil {
			t.Fatalf("Step: %v", err)
		}
		done(s)
		last = s
	}
	// The merged step names the sick workers beside its numbers.
	if w := strings.Join(last.Warnings, "\n"); !strings.Contains(w, "worker 2 (") || !strings.Contains(w, ") was generator-limited: open files") ||
		!strings.Contains(w, ") was generator-bound: it used 0.60 of its 2 cores") || strings.Contains(w, "worker 1 (") {
		t.Errorf("merged step's warnings %q; want workers 2 and 3 named with their reasons, not worker 1", last.Warnings)
	}
	b, err := json.Marshal(cl.coord.Record())
	if err != nil {
		t.Fatal(err)
	}
	var rec Record
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Version != RecordVersion || len(rec.Steps) != 3 || rec.Steps[1].Name() != "c=30 #2" || len(rec.Steps[0].Workers) != 3 {
		t.Fatalf("Record() = version %d, steps %+v; want version %d and the three measured steps of 3 workers", rec.Version, rec.Steps, RecordVersion)
	}
	want := []struct{ mark, reason string }{
		{"", ""},
		{"generator-limited", "generator-limited: open files of apiperf's process ran out at 4 of 10 connections (EMFILE); fix: raise ulimit -n"},
		{"generator-bound", "generator-bound: it used 0.60 of its 2 cores and its threads waited 1.50 s per second for a CPU"},
	}
	for k, h := range rec.Steps[0].Workers {
		if h.Worker != k+1 || h.Mark() != want[k].mark || !strings.HasPrefix(h.Reason(), want[k].reason) || h.Asked != 10 {
			t.Errorf("worker %d: health %+v, mark %q, reason %q; want mark %q, reason %q, 10 connections asked", k+1, h, h.Mark(), h.Reason(), want[k].mark, want[k].reason)
		}
		if wantOpened := []int{10, 4, 10}[k]; h.Opened != wantOpened {
			t.Errorf("worker %d opened %d of %d connections; want %d", k+1, h.Opened, h.Asked, wantOpened)
		}
		sh := rec.Shares[k]
		if sh.Health == nil || sh.Health.Mark() != want[k].mark {
			t.Errorf("worker %d's share: health %+v; want the last step's, marked %q", k+1, sh.Health, want[k].mark)
		}
		if runtime.GOOS == "linux" && (sh.Machine == nil || sh.Machine.CPUs < 1 || h.Conditions == nil || h.Conditions.Samples < 1) {
			t.Errorf("worker %d: machine %+v, conditions %+v; want its machine and its step's conditions (/proc is readable)", k+1, sh.Machine, h.Conditions)
		}
	}
}
