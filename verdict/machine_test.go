package verdict

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
)

// text is a claim's summary and evidence.
func text(c *Claim) string { return c.Summary + "\n" + strings.Join(c.Evidence, "\n") }

// Requests parked in a pool while other processes fill the machine: the pool is the
// place (a wait for a pool needs no CPU), said with the full machine, at most medium.
func TestPoolWaitOnAFullMachine(t *testing.T) {
	levels := with(plateauLevels(), func(_ int, l *Level) {
		l.Target = &Usage{CPUCores: 0.08, RunWaitCores: 0.02, Cores: 2}
		l.Generator = &Usage{CPUCores: 0.02, Cores: 2}
		l.Machine = &Machine{CPUs: 2, Busy: 1.99}
		l.Profile = &Profile{Goroutines: 65, Waits: []Wait{{Site: "database/sql: waiting for a connection from main.(*store).user", Count: 62, Reason: "pool"}}}
	})
	v := Judge(Input{Levels: levels, Peak: 2, MachineCores: 2, SameMachine: true})
	c := v.Claim(TargetWaiting)
	if c == nil || c.Confidence != Medium || !strings.Contains(c.Summary, "62 of 65 request goroutines wait in database/sql: waiting for a connection") ||
		!strings.Contains(c.Summary, "the machine's CPUs were full (other processes 1.89 cores)") {
		t.Fatalf("pool wait on a full machine: %v, want target-waiting (medium) naming the pool and the full machine\n%+v", c, v)
	}
	// The same requests in network reads: a full machine may be why, so no claim.
	levels[3].Profile = &Profile{Goroutines: 65, Waits: []Wait{{Site: "network or file I/O from main.(*store).user", Count: 62, Reason: "I/O"}}}
	for i := range levels {
		levels[i].Profile = levels[3].Profile
	}
	if v := Judge(Input{Levels: levels, Peak: 2, MachineCores: 2, SameMachine: true}); v.Has(TargetWaiting) {
		t.Errorf("I/O waits on a full machine: %v, want no target-waiting", v.Claim(TargetWaiting))
	}
}

// The README's Explain example with another process busy on one of the two cores (as
// measured: the demo's CPU-heavy handler got 0.55 cores, apiperf 0.4, the machine was
// full): the target is short of CPU, said with who took it; not target-waiting, whatever
// the goroutine profile's top wait site (idle connections read in net.(*netFD).Read).
func TestBusyMachineIsNotWaiting(t *testing.T) {
	for _, runWait := range []float64{0, 0.9} { // found the target's PID, or not
		levels := with(plateauLevels(), func(_ int, l *Level) {
			l.Target = &Usage{CPUCores: 0.55, RunWaitCores: runWait, Cores: 2}
			l.Generator = &Usage{CPUCores: 0.4, Cores: 2}
			l.Machine = &Machine{CPUs: 2, Busy: 1.99}
			l.Profile = &Profile{Goroutines: 64, Waits: []Wait{{Site: "net.(*netFD).Read from main.main.func2", Count: 40, Reason: "I/O"}}}
		})
		v := Judge(Input{Levels: levels, Peak: 2, MachineCores: 2, SameMachine: true})
		if v.Has(TargetWaiting) || !v.Has(TargetCPU) {
			t.Fatalf("run wait %v: Judge on a full machine: %v, want target-cpu-bound and no target-waiting\n%+v", runWait, v.Kinds(), v)
		}
		c := v.Claim(TargetCPU)
		if !strings.Contains(c.Summary, "1.04 of them taken by other processes") {
			t.Errorf("run wait %v: target-cpu-bound summary %q does not say others took CPU", runWait, c.Summary)
		}
		if len(v.Machine) != 4 || !v.Machine[0].Shared || !v.Machine[0].Full {
			t.Errorf("run wait %v: Machine = %+v, want 4 levels, shared and full", runWait, v.Machine)
		}
		if s := strings.Join(v.Silent, "\n"); runWait == 0 && !strings.Contains(s, "target waiting: not judged, the machine's CPUs were full") {
			t.Errorf("Silent = %q, want target waiting not judged for a full machine", v.Silent)
		}
	}
}

// A target that waits on a pool while another process takes half a core: waiting, but
// medium, and the claim says others took CPU. The same with nobody else: high.
func TestWaitingOnASharedMachine(t *testing.T) {
	build := func(busy float64) Verdict {
		levels := with(plateauLevels(), func(_ int, l *Level) {
			l.Target = &Usage{CPUCores: 0.2, RunWaitCores: 0.01, Cores: 2}
			l.Generator = &Usage{CPUCores: 0.3, Cores: 2}
			l.Machine = &Machine{CPUs: 2, Busy: busy}
			l.Profile = &Profile{Goroutines: 64, Waits: []Wait{{Site: "database/sql: waiting for a connection, from main.(*store).user", Count: 60, Reason: "pool"}}}
		})
		return Judge(Input{Levels: levels, Peak: 2, MachineCores: 2, SameMachine: true})
	}
	v := build(1.0)
	c := v.Claim(TargetWaiting)
	if c == nil || c.Confidence != Medium || !strings.Contains(c.Summary, "other processes took 0.50 cores") ||
		!strings.Contains(c.Summary, "60 of 64 request goroutines wait in database/sql: waiting for a connection") {
		t.Fatalf("shared machine: %v, want target-waiting (medium) naming the pool and the others' CPU", c)
	}
	v = build(0.55)
	if c := v.Claim(TargetWaiting); c == nil || c.Confidence != High {
		t.Fatalf("idle machine: %v, want target-waiting (high)", c)
	}
	// Without the target's run-queue wait (no PID): medium, saying what was missing.
	levels := with(plateauLevels(), func(_ int, l *Level) {
		l.Target = &Usage{CPUCores: 0.2, Cores: 2}
		l.Machine = &Machine{CPUs: 2, Busy: 0.3}
		l.Profile = &Profile{Goroutines: 64, Waits: []Wait{{Site: "sync.(*Mutex).Lock from main.handler", Count: 60, Reason: "mutex"}}}
	})
	v = Judge(Input{Levels: levels, Peak: 2, MachineCores: 2, SameMachine: true})
	c = v.Claim(TargetWaiting)
	if c == nil || c.Confidence != Medium || !strings.Contains(text(c), "confidence medium: not measured: the target's wait for a CPU") {
		t.Fatalf("no run-queue wait: %v, want medium saying the wait for a CPU was not measured", c)
	}
}

// Thresholds: the zero value is the defaults, every default is set, a verdict keeps them,
// they survive JSON, and one changed threshold changes the verdict.
func TestThresholds(t *testing.T) {
	d := reflect.ValueOf(DefaultThresholds)
	for i := range d.NumField() {
		if d.Field(i).IsZero() {
			t.Errorf("DefaultThresholds.%s is 0", d.Type().Field(i).Name)
		}
	}
	if (Thresholds{}).Filled() != DefaultThresholds {
		t.Errorf("zero Thresholds filled = %+v, want the defaults", Thresholds{}.Filled())
	}
	v := Judge(Input{Levels: plateauLevels(), Peak: 2})
	if v.Thresholds == nil || *v.Thresholds != DefaultThresholds {
		t.Fatalf("Verdict.Thresholds = %v, want the defaults", v.Thresholds)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var back Verdict
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Thresholds == nil || *back.Thresholds != DefaultThresholds {
		t.Errorf("thresholds after JSON = %+v, want the defaults", back.Thresholds)
	}
	// 1.9 of 2 cores is CPU-bound at the default 0.85, not at 0.99.
	levels := with(plateauLevels(), target(1.9, 2))
	if v := Judge(Input{Levels: levels, Peak: 2}); !v.Has(TargetCPU) {
		t.Errorf("default thresholds: %v, want target-cpu-bound", v.Kinds())
	}
	if v := (Thresholds{CPUSaturated: 0.99}).Judge(Input{Levels: levels, Peak: 2}); v.Has(TargetCPU) || v.Thresholds.CPUSaturated != 0.99 || v.Thresholds.CPUIdle != DefaultThresholds.CPUIdle {
		t.Errorf("CPUSaturated 0.99: %v with %+v, want no target-cpu-bound and the other defaults", v.Kinds(), v.Thresholds)
	}
}

// A capacity search against a port where nothing listens: its probes ran from 100/s down,
// all refused. The claim says every level failed, from the first probe (100/s) on, and
// lists them in the order they ran.
func TestErrorsEveryProbe(t *testing.T) {
	rates := []float64{0.195, 0.39, 0.78, 1.56, 3.12, 6.25, 12.5, 25, 50, 100}
	var levels []Level
	for _, r := range rates {
		levels = append(levels, Level{Label: "rate=" + num(r) + "/s", Load: r, Open: true, Attempts: 10, Errors: measure.Errors{Connect: 10}})
	}
	ran := []int{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}
	v := Judge(Input{Levels: levels, Peak: -1, Ran: ran})
	c := v.Claim(ErrorsStart)
	if c == nil {
		t.Fatalf("no errors claim: %+v", v)
	}
	if !strings.Contains(c.Summary, "every level failed, from the first (rate=100/s) on, mostly connect") || c.Level != "rate=100/s" {
		t.Errorf("summary %q at %q, want every level failed from rate=100/s", c.Summary, c.Level)
	}
	if !strings.Contains(c.Evidence[0], "in the order they ran: rate=100/s 100.0%, rate=50/s 100.0%") {
		t.Errorf("evidence %q, want the probes in the order they ran", c.Evidence[0])
	}
	if strings.Contains(text(c), "(last)") || !strings.Contains(c.Fix, "check that the target is up") {
		t.Errorf("claim %q / fix %q: want no (last) and a fix saying to check the target is up", text(c), c.Fix)
	}
	if !slices.Equal(Input{Levels: levels[:3], Ran: []int{2, 7, 2}}.ranOrder(), []int{2, 0, 1}) {
		t.Errorf("ranOrder with a bad and a repeated index = %v, want [2 0 1]", Input{Levels: levels[:3], Ran: []int{2, 7, 2}}.ranOrder())
	}
}

// Timeouts at a level where other processes took the CPU, few failures, or errors that
// stop at a higher load are not "high": the machine may be what failed.
func TestErrorsOnASharedMachine(t *testing.T) {
	base := func() []Level {
		return with(closed([3]float64{1, 500, 2}, [3]float64{2, 1000, 2}, [3]float64{4, 2000, 2}), func(i int, l *Level) {
			if i > 0 {
				l.Errors, l.Attempts = measure.Errors{Timeout: 100}, 1000
			}
		})
	}
	if c := claimOf(Input{Levels: base(), Peak: 2}, ErrorsStart); c == nil || c.Confidence != High {
		t.Fatalf("timeouts on an idle machine: %v, want errors (high)", c)
	}
	shared := with(base(), func(_ int, l *Level) {
		l.Generator = &Usage{CPUCores: 0.1, Cores: 2}
		l.Target = &Usage{CPUCores: 0.1, Cores: 2}
		l.Machine = &Machine{CPUs: 2, Busy: 1.9}
	})
	c := claimOf(Input{Levels: shared, Peak: 2, SameMachine: true}, ErrorsStart)
	if c == nil || c.Confidence != Medium || !strings.Contains(text(c), "the machine was shared at c=2") {
		t.Errorf("timeouts on a shared machine: %v, want medium, saying the machine was shared", c)
	}
	few := base()
	few[1].Errors, few[1].Attempts, few[2].Errors, few[2].Attempts = measure.Errors{Timeout: 1}, 8, measure.Errors{Timeout: 2}, 9
	if c := claimOf(Input{Levels: few, Peak: 2}, ErrorsStart); c == nil || c.Confidence != Medium || !strings.Contains(text(c), "only 1 failed attempts") {
		t.Errorf("one timeout of 8: %v, want medium", c)
	}
	stops := base()
	stops[2].Errors = measure.Errors{}
	if c := claimOf(Input{Levels: stops, Peak: 2}, ErrorsStart); c == nil || c.Confidence != Medium || !strings.Contains(text(c), "at c=4, a higher load, only 0.00% failed") {
		t.Errorf("errors gone at a higher load: %v, want medium", c)
	}
}

// claimOf judges in and returns its claim of kind k, or nil.
func claimOf(in Input, k Kind) *Claim {
	v := Judge(in)
	return v.Claim(k)
}

// Zoo busy run 1: a bcrypt handler that got 0.14 cores of a machine others filled, QPS
// noisy with no plateau, its request goroutines running: short of CPU (low), not silence.
func TestShortOfCPUWithoutPlateau(t *testing.T) {
	levels := with(closed([3]float64{1, 13, 77}, [3]float64{3, 14.5, 207}, [3]float64{8, 20.5, 390}), func(_ int, l *Level) {
		l.Target = &Usage{CPUCores: 0.14, RunWaitCores: 0.5, Cores: 2}
		l.Generator = &Usage{CPUCores: 0.01, Cores: 2}
		l.Machine = &Machine{CPUs: 2, Busy: 2}
		l.Profile = &Profile{Goroutines: 8, Waits: []Wait{{Site: "golang.org/x/crypto/blowfish.encryptBlock from main.main.func1", Count: 7, Reason: "running"}},
			Hot: []Function{{"golang.org/x/crypto/blowfish.encryptBlock", 80}}, HotPath: "main.main.func1 -> golang.org/x/crypto/bcrypt.CompareHashAndPassword -> golang.org/x/crypto/blowfish.encryptBlock"}
	})
	v := Judge(Input{Levels: levels, Peak: 2, MachineCores: 2, SameMachine: true})
	c := v.Claim(TargetCPU)
	if c == nil || c.Confidence != Low || !strings.Contains(c.Summary, "its requests want CPU and other processes took 1.85 cores") ||
		!strings.Contains(text(c), "blowfish.encryptBlock") || v.Has(TargetWaiting) {
		t.Fatalf("bcrypt on a full machine without a plateau: %v, want target-cpu-bound (low) naming blowfish\n%+v", c, v)
	}
}

// Zoo busy run 1: a database pool of one connection on a machine others shared, QPS
// 164 -> 94 -> 242 while the load rose 16x: a weak plateau, the pool named, medium.
func TestWaitingOnAWeakPlateau(t *testing.T) {
	levels := with(closed([3]float64{2, 164, 12}, [3]float64{8, 94, 85}, [3]float64{32, 242, 132}), func(_ int, l *Level) {
		l.Target = &Usage{CPUCores: 0.05, RunWaitCores: 0.01, Cores: 2}
		l.Generator = &Usage{CPUCores: 0.02, Cores: 2}
		l.Machine = &Machine{CPUs: 2, Busy: 1.2}
		l.Profile = &Profile{Goroutines: 33, Waits: []Wait{{Site: "database/sql: waiting for a connection (pool at SetMaxOpenConns) from main.(*store).get", Count: 31, Reason: "pool"}}}
	})
	v := Judge(Input{Levels: levels, Peak: 2, MachineCores: 2, SameMachine: true})
	c := v.Claim(TargetWaiting)
	if c == nil || c.Confidence != Medium || !strings.Contains(text(c), "throughput grew only 1.5x from c=2 to c=32") ||
		!strings.Contains(c.Summary, "database/sql: waiting for a connection") {
		t.Fatalf("pool wait with noisy throughput: %v, want target-waiting (medium) on a weak plateau naming the pool\n%+v", c, v)
	}
}

// apiperf starved on a shared machine (generator-bound, medium) does not hide requests
// parked in a pool: target-waiting is claimed too, medium, saying the generator was short;
// without a place named it stays unjudged.
func TestWaitingBesideAMediumGenerator(t *testing.T) {
	levels := with(plateauLevels(), func(_ int, l *Level) {
		l.Generator = &Usage{CPUCores: 0.45, RunWaitCores: 0.65, Cores: 1}
		l.Target = &Usage{CPUCores: 0.05, RunWaitCores: 0.01, Cores: 2}
		l.Machine = &Machine{CPUs: 2, Busy: 1.6}
		l.Profile = &Profile{Goroutines: 64, Waits: []Wait{{Site: "go-redis: waiting for a pool connection (PoolSize) from main.get", Count: 60, Reason: "pool"}}}
	})
	v := Judge(Input{Levels: levels, Peak: 2, MachineCores: 2, SameMachine: true})
	if g := v.Claim(GeneratorBound); g == nil || g.Confidence != Medium {
		t.Fatalf("generator claim %v, want medium", g)
	}
	c := v.Claim(TargetWaiting)
	if c == nil || c.Confidence != Medium || !strings.Contains(text(c), "a generator with the CPU it wanted (generator-bound, medium)") {
		t.Fatalf("waiting claim %v, want medium naming the pool and the generator", c)
	}
	for i := range levels {
		levels[i].Profile = nil
	}
	if v := Judge(Input{Levels: levels, Peak: 2, MachineCores: 2, SameMachine: true}); v.Has(TargetWaiting) {
		t.Errorf("no wait site beside a starved generator: %v, want no target-waiting", v.Claim(TargetWaiting))
	}
	// The generator demo as measured: 2 request goroutines at c=64, one in a channel
	// receive: requests did not queue in the target, nothing to name.
	for i := range levels {
		levels[i].Profile = &Profile{Goroutines: 2, Waits: []Wait{{Site: "a channel receive in main.main.func1", Count: 1, Reason: "channel receive"}}}
	}
	if v := Judge(Input{Levels: levels, Peak: 2, MachineCores: 2, SameMachine: true}); v.Has(TargetWaiting) {
		t.Errorf("2 request goroutines for 64 connections beside a starved generator: %v, want no target-waiting", v.Claim(TargetWaiting))
	}
}

// Zoo chi-gc: requests allocating and held up by the collector (and running in main.buildFeed)
// on a machine others filled are not "parked": short of CPU, not target-waiting.
func TestAllocatingIsNotWaiting(t *testing.T) {
	levels := with(plateauLevels(), func(_ int, l *Level) {
		l.Target = &Usage{CPUCores: 0.42, RunWaitCores: 0.3, Cores: 2}
		l.Generator = &Usage{CPUCores: 0.02, Cores: 2}
		l.Machine = &Machine{CPUs: 2, Busy: 2}
		l.Profile = &Profile{Goroutines: 8, GCPct: 35, Waits: []Wait{{Site: "main.buildFeed", Count: 5, Reason: "GC"},
			{Site: "fmt.Sprint from main.buildFeed", Count: 2, Reason: "running"}, {Site: "sync.(*Pool).pin", Count: 1, Reason: "semaphore"}}}
	})
	v := Judge(Input{Levels: levels, Peak: 2, MachineCores: 2, SameMachine: true})
	if v.Has(TargetWaiting) || !v.Has(TargetCPU) {
		t.Fatalf("allocating requests on a full machine: %v, want target-cpu-bound and no target-waiting\n%+v", v.Kinds(), v)
	}
	if c := v.Claim(TargetCPU); !strings.Contains(text(c), "88% of 8 request goroutines were running, runnable or held up by the garbage collector (most in main.buildFeed)") {
		t.Errorf("claim %s\nwant the running share and site", text(c))
	}
}

// The connection-limit demo as measured: at c=32, 96% of attempts lost their connection
// and the machine filled with the reconnecting; the errors are the story, not the CPU.
func TestConnectionChurnIsNotShortOfCPU(t *testing.T) {
	levels := with(closed([3]float64{4, 380, 10.5}, [3]float64{8, 760, 10.5}, [3]float64{32, 1300, 10.7}), func(i int, l *Level) {
		l.Target = &Usage{CPUCores: []float64{0.03, 0.04, 0.5}[i], Cores: 2}
		l.Generator = &Usage{CPUCores: []float64{0.01, 0.02, 0.59}[i], Cores: 2}
		l.Machine = &Machine{CPUs: 2, Busy: 2}
	})
	levels[2].Attempts, levels[2].Errors = 61630, measure.Errors{Connect: 9731, Read: 49507, Write: 22}
	v := Judge(Input{Levels: levels, Peak: 2, MachineCores: 2, SameMachine: true})
	if got := v.Kinds(); !slices.Equal(got, []Kind{ErrorsStart}) {
		t.Fatalf("connection churn on a full machine: %v, want only errors\n%+v", got, v)
	}
	if s := strings.Join(v.Silent, "\n"); !strings.Contains(s, "target short of CPU: not judged at c=32, where 96.2% of attempts lost their connection") {
		t.Errorf("Silent = %q, want the CPU not judged at c=32", v.Silent)
	}
}

// Zoo run 7: a healthy fiber service at 100-300 req/s on a machine others filled, its one
// request running when profiled: it kept up with every rate, so nothing is claimed.
func TestHealthyOnAFullMachine(t *testing.T) {
	var levels []Level
	for _, r := range []float64{100, 200, 300} {
		levels = append(levels, Level{Label: "rate=" + num(r) + "/s", Load: r, Open: true, QPS: r, Mean: time.Millisecond, Attempts: int64(2 * r),
			Target: &Usage{CPUCores: 0.05, RunWaitCores: 0.05, Cores: 2}, Generator: &Usage{CPUCores: 0.02, Cores: 2},
			Machine: &Machine{CPUs: 2, Busy: 2},
			Profile: &Profile{Goroutines: 1, Waits: []Wait{{Site: "main.main.func1", Count: 1, Reason: "running"}}}})
	}
	if v := Judge(Input{Levels: levels, Peak: 2, MachineCores: 2, SameMachine: true}); len(v.Claims) != 0 {
		t.Errorf("a healthy service on a full machine: %v, want no claim\n%+v", v.Kinds(), v)
	}
}

// A leak's summary names what piled up: the background goroutines (here connections whose
// response bodies were never closed), not the requests in flight.
func TestGrowthNamesTheBackground(t *testing.T) {
	levels := with(closed([3]float64{1, 500, 2}, [3]float64{2, 1000, 2}, [3]float64{4, 2000, 2}), func(i int, l *Level) {
		l.Target = &Usage{CPUCores: 0.2, Cores: 2, Goroutines: []float64{471, 1388, 2776}[i], GoroutineRise: []float64{400, 900, 1400}[i]}
		l.Profile = &Profile{Goroutines: 17, Waits: []Wait{{Site: "http.Transport: waiting for the downstream's response from main.main.func1", Count: 17, Reason: "select"}},
			Background: []Wait{{Site: "http.Transport: an open connection's reader (many: response bodies not closed or not read to the end?)", Count: 1380, Reason: "select"}}}
	})
	c := claimOf(Input{Levels: levels, Peak: 2}, Growth)
	if c == nil || !strings.Contains(c.Summary, "1,380 goroutines serving no request wait in http.Transport: an open connection's reader") {
		t.Fatalf("growth claim %v, want its summary naming the connections' readers", c)
	}
}

// Requests reading a database's answer while the machine is full, the database on it: the
// database is the place (a read of a downstream's answer is parked, not a CPU wait), its CPU
// is apart from "other processes", and the fix is the query's, not a pool's.
func TestDownstreamWaitOnAFullMachine(t *testing.T) {
	levels := with(plateauLevels(), func(_ int, l *Level) {
		l.Target = &Usage{CPUCores: 0.1, RunWaitCores: 0.02, Cores: 2}
		l.Generator = &Usage{CPUCores: 0.05, Cores: 2}
		l.Machine = &Machine{CPUs: 2, Busy: 1.99, Downstreams: 1.5}
		l.Profile = &Profile{Goroutines: 64, Waits: []Wait{{Site: "MySQL/MariaDB (go-sql-driver/mysql) at 127.0.0.1:3306 (mariadbd, 1.50 cores): waiting for its answer from main.(*store).find",
			Count: 60, Reason: "downstream"}}}
	})
	v := Judge(Input{Levels: levels, Peak: 2, MachineCores: 2, SameMachine: true})
	c := v.Claim(TargetWaiting)
	if c == nil || !strings.Contains(c.Summary, "60 of 64 request goroutines wait in MySQL/MariaDB (go-sql-driver/mysql) at 127.0.0.1:3306 (mariadbd, 1.50 cores)") ||
		!strings.Contains(c.Fix, "index") || strings.Contains(c.Fix, "pool") {
		t.Fatalf("database wait on a full machine: %v, want target-waiting naming the database and a query's fix\n%+v", c, v)
	}
	if m := v.Machine[0]; m.Downstreams != 1.5 || m.Others > 0.35 || !strings.Contains(m.String(), "downstreams on this machine 1.50 apart") {
		t.Errorf("machine = %+v (%s), want the database's 1.5 cores apart from other processes", m, m)
	}
}

// Zoo pq-unindexed beside `stress-ng --cpu 2`, as measured twice: PostgreSQL scanning an
// unindexed table took 1.5 of the 2 full cores, the target 0.05; the target's few request
// goroutines were parked reading PostgreSQL's answer or waited for a CPU after it (64% of
// them in the first run). The database is the place either way: not "short of CPU" with
// a fix for the target's hot functions, and not silence.
func TestDownstreamHoldsTheFullMachine(t *testing.T) {
	const pq = "PostgreSQL (lib/pq) at 127.0.0.1:5432 (postgres, 1.58 cores): waiting for its answer from main.(*customers).find"
	for _, tc := range []struct {
		name       string
		goroutines int64
		waits      []Wait
		count      string
	}{
		{"parked", 14, []Wait{{Site: pq, Count: 9, Reason: "downstream"}, {Site: "github.com/lib/pq.(*conn).recv1 from main.(*customers).find", Count: 4, Reason: "running"}}, "9 of 14"},
		{"waiting to run", 14, []Wait{{Site: "github.com/lib/pq.(*conn).recv1 from main.(*customers).find", Count: 9, Reason: "running"}, {Site: pq, Count: 5, Reason: "downstream"}}, "5 of 14"},
		// busy-ci 2026-12-03: most requests queued on database/sql's own lock (its holders
		// waiting for a CPU PostgreSQL held), fewer reading the answer: still the database.
		{"queued on database/sql's lock", 62, []Wait{{Site: "sync.Mutex: waiting for the lock from main.(*customers).find", Count: 25, Reason: "mutex"},
			{Site: "database/sql: waiting for a connection (pool at SetMaxOpenConns) from main.(*customers).find", Count: 22, Reason: "pool"},
			{Site: pq, Count: 15, Reason: "downstream"}}, "15 of 62"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			levels := with(closed([3]float64{4, 53.5, 73.8}, [3]float64{16, 82, 181.7}, [3]float64{64, 79, 603.1}), func(i int, l *Level) {
				l.Target = &Usage{CPUCores: 0.05, RunWaitCores: 1.33, Cores: 2}
				l.Generator = &Usage{CPUCores: 0.03, Cores: 2}
				l.Machine = &Machine{CPUs: 2, Busy: 2, Downstreams: []float64{1.02, 1.55, 1.69}[i]}
			})
			levels[2].Profile = &Profile{Goroutines: tc.goroutines, Waits: tc.waits}
			v := Judge(Input{Levels: levels, Peak: 1, MachineCores: 2, SameMachine: true})
			c := v.Claim(TargetWaiting)
			if c == nil || !strings.Contains(c.Summary, tc.count+" request goroutines wait in "+pq) ||
				!strings.Contains(c.Summary, "downstreams on this machine used 1.55 of the machine's 2 full cores") || c.Confidence == High || !strings.Contains(c.Fix, "index") {
				t.Fatalf("a full machine held by the database: %v, want target-waiting naming PostgreSQL, at most medium\n%+v", c, v)
			}
			if v.Has(TargetCPU) {
				t.Errorf("also claims %s", text(v.Claim(TargetCPU)))
			}
		})
	}
}

// The live heap rising within every level with the execution trace's own buffers its largest
// site is the capture's, not a leak (TestTimingVerdictGRPC beside stress-ng said "a leak:
// most live heap allocated in runtime/trace.(*traceMultiplexer).startLocked"); the same rise
// led by the service's own site is one.
func TestGrowthOfTheCaptureIsNotALeak(t *testing.T) {
	heapLevels := func(site string) []Level {
		return with(closed([3]float64{2, 900, 2}, [3]float64{8, 3000, 2.7}), func(i int, l *Level) {
			l.Target = &Usage{CPUCores: 0.3, Cores: 2, HeapBytes: []float64{8.6, 8.8}[i] * (1 << 20), HeapRise: []float64{4.1, 4.4}[i] * (1 << 20)}
			if i == 1 {
				l.Profile = &Profile{Goroutines: 9, Inuse: []Function{{Name: site, Pct: 41}, {Name: "bufio.NewReaderSize", Pct: 12}}}
			}
		})
	}
	v := Judge(Input{Levels: heapLevels("runtime/trace.(*traceMultiplexer).startLocked"), Peak: 1})
	if c := v.Claim(Growth); c != nil {
		t.Errorf("heap led by the trace's buffers: %v, want no growth claim", c)
	}
	if !slices.ContainsFunc(v.Silent, func(s string) bool {
		return strings.Contains(s, "the capture's own (runtime/trace.(*traceMultiplexer).startLocked, 41%)")
	}) {
		t.Errorf("silent %q: want the capture's rise said", v.Silent)
	}
	if c := claimOf(Input{Levels: heapLevels("main.rememberPreview"), Peak: 1}, Growth); c == nil || !strings.Contains(c.Summary, "most live heap allocated in main.rememberPreview") {
		t.Errorf("heap led by the service's site: %v, want a growth claim naming it", c)
	}
}

// Zoo pq-unindexed in busy-ci once said "no goroutine profile on the plateau (give --pprof ...)"
// on a sweep run with --pprof: why there are no wait sites is said as it is (no profile kept
// there, one without a goroutine profile, or one with no request goroutine waiting).
func TestWhyNoWaitSites(t *testing.T) {
	for _, tc := range []struct {
		name    string
		profile func(i int) *Profile
		want    string
	}{
		{"no --pprof", func(int) *Profile { return nil }, "no goroutine profile on the plateau (give --pprof"},
		{"kept at the first level only", func(i int) *Profile {
			if i == 0 {
				return &Profile{Goroutines: 2}
			}
			return nil
		}, "no goroutine profile on the plateau (c=8 to c=64); profiles were kept at other levels"},
		{"goroutine profile not captured", func(i int) *Profile {
			if i == 3 {
				return &Profile{TopCum: []Function{{"main.handler", 40}}}
			}
			return nil
		}, "the profiles at c=64 have no goroutine profile"},
		{"none waiting", func(i int) *Profile {
			if i == 3 {
				return &Profile{Goroutines: 60}
			}
			return nil
		}, "the goroutine profile at c=64 shows 60 request goroutines and none waiting"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			levels := with(plateauLevels(), func(i int, l *Level) {
				l.Target = &Usage{CPUCores: 0.1, Cores: 2}
				l.Profile = tc.profile(i)
			})
			v := Judge(Input{Levels: levels, Peak: 2})
			if s := strings.Join(v.Silent, "\n"); !strings.Contains(s, "wait sites: "+tc.want) {
				t.Errorf("Silent = %q, want %q", v.Silent, "wait sites: "+tc.want)
			}
		})
	}
}
