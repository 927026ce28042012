package verdict

import (
	"regexp"
	"slices"
	"testing"
	"time"
)

func TestTraceClaims(t *testing.T) {
	ms, us := time.Millisecond, time.Microsecond
	level := func(p99, mean time.Duration, qps float64, tr Trace) Level {
		tr.Span = time.Second
		return Level{Label: "c=8", Load: 8, QPS: qps, Mean: mean, P99: p99, Attempts: 1000, Trace: &tr}
	}
	tests := []struct {
		name  string
		in    Input
		prior []Claim // claims already made by the other rules
		want  []Kind
		conf  Confidence
	}{
		// one P of two cores, full, goroutines queued for it a large part of the p99: named, high.
		{"gomaxprocs below the cores", Input{Levels: []Level{level(8*ms, 4*ms, 2000, Trace{GOMAXPROCS: 1, Cores: 2, BusyPs: 0.97, SchedP99: 3 * ms})}},
			nil, []Kind{GOMAXPROCSLimited}, High},
		// the same beside a generator that used 1.2 of the 2 cores: no spare core here, low.
		{"gomaxprocs on a shared machine", Input{Levels: []Level{func() Level {
			l := level(8*ms, 4*ms, 2000, Trace{GOMAXPROCS: 1, Cores: 2, BusyPs: 0.97, SchedP99: 3 * ms})
			l.Generator = &Usage{CPUCores: 1.2}
			return l
		}()}}, nil, []Kind{GOMAXPROCSLimited}, Low},
		// the same with the one P half idle: not the limit.
		{"gomaxprocs not full", Input{Levels: []Level{level(8*ms, 4*ms, 2000, Trace{GOMAXPROCS: 1, Cores: 2, BusyPs: 0.5})}},
			nil, nil, ""},
		// cores unknown (a remote target without /proc): silent.
		{"cores unknown", Input{Levels: []Level{level(8*ms, 4*ms, 2000, Trace{GOMAXPROCS: 1, BusyPs: 0.97})}},
			nil, nil, ""},
		// GOMAXPROCS at the cores: nothing to raise.
		{"gomaxprocs at the cores", Input{Levels: []Level{level(8*ms, 4*ms, 2000, Trace{GOMAXPROCS: 2, Cores: 2, BusyPs: 1.9})}},
			nil, nil, ""},
		// scheduler p99 half the request p99, Ps not full: sched-latency, high.
		{"sched latency", Input{Levels: []Level{level(4*ms, 2*ms, 2000, Trace{GOMAXPROCS: 2, Cores: 2, BusyPs: 1.2, SchedP99: 2 * ms})}},
			nil, []Kind{SchedLatency}, High},
		// the same wait on a target whose Ps were idle (a healthy service on a busy machine):
		// the CPU was the machine's to give, not the target's: no claim.
		{"sched latency, Ps idle", Input{Levels: []Level{level(4*ms, 2*ms, 2000, Trace{GOMAXPROCS: 2, Cores: 2, BusyPs: 0.08, SchedP99: 2 * ms})}},
			nil, nil, ""},
		// the same on a target already claimed CPU-bound: its CPU claim says it.
		{"sched latency of a cpu-bound target", Input{Levels: []Level{level(4*ms, 2*ms, 2000, Trace{GOMAXPROCS: 2, Cores: 2, BusyPs: 1.2, SchedP99: 2 * ms})}},
			[]Claim{{Kind: TargetCPU}}, nil, ""},
		// 2 ms pauses, 3% of the time, against a 4 ms p99: gc-tail, high.
		{"stw sets the tail", Input{Levels: []Level{level(4*ms, ms, 2000, Trace{GOMAXPROCS: 2, Cores: 2, BusyPs: 1, STWMax: 2 * ms, STWTotal: 30 * ms})}},
			nil, []Kind{GCTail}, High},
		// the same on a target whose threads waited 0.9 s per second for a CPU (a busy
		// machine): the pauses hold that wait too: medium.
		{"stw on a target short of cpu", Input{Levels: []Level{func() Level {
			l := level(4*ms, ms, 2000, Trace{GOMAXPROCS: 2, Cores: 2, BusyPs: 1, STWMax: 2 * ms, STWTotal: 30 * ms})
			l.Target = &Usage{CPUCores: 1.06, RunWaitCores: 0.91}
			return l
		}()}}, nil, []Kind{GCTail}, Medium},
		// the same pause length but rare (0.2% of the time): it cannot set the p99.
		{"rare pauses", Input{Levels: []Level{level(4*ms, ms, 2000, Trace{GOMAXPROCS: 2, Cores: 2, BusyPs: 1, STWMax: 2 * ms, STWTotal: 2 * ms})}},
			nil, nil, ""},
		// the same pauses spent stopping the world (threads waiting for a CPU on a busy
		// machine), the collector's work 0.2 ms: not the collector's tail.
		{"pauses waiting to stop", Input{Levels: []Level{level(4*ms, ms, 2000, Trace{GOMAXPROCS: 2, Cores: 2, BusyPs: 1, STWMax: 2 * ms, STWTotal: 30 * ms,
			STWStopping: 27 * ms, STWWorkMax: ms / 5})}},
			nil, nil, ""},
		// 82 ms pauses against a 9.3 ms p99 the pauses did not move (fewer than 1% of the
		// requests met one): no claim on the p99.
		{"a pause longer than the p99", Input{Levels: []Level{level(9300*us, ms, 2000, Trace{GOMAXPROCS: 2, Cores: 2, BusyPs: 1, STWMax: 82 * ms, STWTotal: 90 * ms, STWWorkMax: 82 * ms})}},
			nil, nil, ""},
		// 200 ms of assist over 2000 requests: 100 us each, 20% of a 500 us mean: gc-tail, high.
		{"assist per request", Input{Levels: []Level{level(2*ms, 500*us, 2000, Trace{GOMAXPROCS: 2, Cores: 2, BusyPs: 1, Assist: 200 * ms, AssistPct: 15})}},
			nil, []Kind{GCTail}, High},
		// an idle target whose little CPU is mostly GC: shares are high, requests do not wait.
		{"idle target with a high GC share", Input{Levels: []Level{level(2*ms, 500*us, 300, Trace{GOMAXPROCS: 2, Cores: 2, BusyPs: 0.05, GCCPUPct: 42, AssistPct: 13, Assist: 2 * ms})}},
			nil, nil, ""},
		// GC at 40% of a full target's CPU: gc-tail, medium.
		{"gc takes a full target's cpu", Input{Levels: []Level{level(2*ms, 500*us, 5000, Trace{GOMAXPROCS: 2, Cores: 2, BusyPs: 1.9, GCCPUPct: 40})}},
			nil, []Kind{GCTail}, Medium},
		// no trace: no trace claim.
		{"no trace", Input{Levels: []Level{{Label: "c=8", P99: ms}}}, nil, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := traceClaims(tt.in, &Verdict{Claims: tt.prior})
			var kinds []Kind
			for _, c := range got {
				kinds = append(kinds, c.Kind)
				if c.Level != "c=8" || c.Summary == "" || len(c.Evidence) == 0 || c.Fix == "" {
					t.Errorf("claim %+v lacks its level, summary, evidence or fix", c)
				}
			}
			if !slices.Equal(kinds, tt.want) {
				t.Fatalf("traceClaims = %v, want %v", got, tt.want)
			}
			if len(got) > 0 && got[0].Confidence != tt.conf {
				t.Errorf("confidence %s, want %s (%s)", got[0].Confidence, tt.conf, got[0].Summary)
			}
		})
	}
}

// The trace claims show durations rounded as every other claim does (dur): "2.73ms", not
// the raw "2.73408ms" of a measured span.
func TestTraceClaimsRoundDurations(t *testing.T) {
	ms := time.Millisecond
	raw := 2*ms + 734083*time.Nanosecond
	in := Input{Levels: []Level{{Label: "c=8", Load: 8, QPS: 2000, Mean: 2*ms + 123456, P99: 4*ms + 567891, Attempts: 1000,
		Trace: &Trace{Span: time.Second + 3456789, GOMAXPROCS: 2, Cores: 2, BusyPs: 1.2, SchedP50: raw / 3, SchedP99: raw, STWMax: raw, STWTotal: 30*ms + 12345}}}}
	for _, c := range traceClaims(in, &Verdict{}) {
		for _, s := range append([]string{c.Summary}, c.Evidence...) {
			if rawDuration.MatchString(s) {
				t.Errorf("%s claim: %q shows a raw duration", c.Kind, s)
			}
		}
	}
}

// rawDuration is a Go duration printed with more than three significant decimals (82.73408ms).
var rawDuration = regexp.MustCompile(`\d+\.\d{4,}(ns|µs|us|ms|s)\b`)

// GOMAXPROCS=1 of 2 cores, its P full, while other processes held 1.45 cores: a P counts
// as busy while its thread waits for a CPU, and a second P would have waited too: low.
func TestGOMAXPROCSOnASharedMachine(t *testing.T) {
	ms := time.Millisecond
	l := Level{Label: "c=8", QPS: 2000, Mean: ms, P99: 4 * ms, Target: &Usage{CPUCores: 0.5}, Generator: &Usage{CPUCores: 0.05},
		Machine: &Machine{CPUs: 2, Busy: 2}}
	tr := &Trace{Span: time.Second, GOMAXPROCS: 1, Cores: 2, BusyPs: 1, SchedP99: 3 * ms}
	c := gomaxprocsClaim(l, tr)
	if c == nil || c.Confidence != Low || !slices.ContainsFunc(c.Evidence, func(e string) bool { return regexp.MustCompile(`other processes 1\.45`).MatchString(e) }) {
		t.Errorf("gomaxprocs-limited on a shared machine: %+v, want low, saying others took 1.45 cores", c)
	}
	l.Machine = &Machine{CPUs: 2, Busy: 0.6}
	if c := gomaxprocsClaim(l, tr); c == nil || c.Confidence != High {
		t.Errorf("gomaxprocs-limited on a quiet machine: %+v, want high", c)
	}
}

// A GC tail's fix names the allocation site of the heap profile (the application's frame),
// not the place a goroutine was drafted into mark assist (the server reading a request).
func TestGCFixNamesTheAllocationSite(t *testing.T) {
	ms := time.Millisecond
	l := Level{Label: "c=8", QPS: 2000, Mean: ms / 2, P99: 2 * ms, Profile: &Profile{AllocPlace: "main.buildRows (97%)"}}
	tr := &Trace{Span: time.Second, GOMAXPROCS: 2, Cores: 2, BusyPs: 1, Assist: 200 * ms, AssistPct: 15, AssistSite: "net/http.readRequest"}
	c := gcClaim(l, tr)
	if c == nil || !regexp.MustCompile(`allocate less below main\.buildRows`).MatchString(c.Fix) || regexp.MustCompile(`readRequest`).MatchString(c.Fix) {
		t.Errorf("gc-tail: %+v, want its fix to name main.buildRows, not net/http.readRequest", c)
	}
}
