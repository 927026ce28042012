package verdict

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
)

// closed builds closed-loop levels from (concurrency, QPS, mean latency in ms) triples;
// p99 is twice the mean and every attempt succeeded.
func closed(rows ...[3]float64) []Level {
	var out []Level
	for _, r := range rows {
		mean := time.Duration(r[2] * float64(time.Millisecond))
		out = append(out, Level{Label: "c=" + num(r[0]), Load: r[0], QPS: r[1], Mean: mean, P99: 2 * mean, Attempts: int64(r[1] * 5)})
	}
	return out
}

func peakOf(ls []Level) int {
	p := -1
	for i, l := range ls {
		if p < 0 || l.QPS > ls[p].QPS {
			p = i
		}
	}
	return p
}

func with(ls []Level, f func(i int, l *Level)) []Level {
	for i := range ls {
		f(i, &ls[i])
	}
	return ls
}

func target(cpu, cores float64) func(int, *Level) {
	return func(_ int, l *Level) { l.Target = &Usage{CPUCores: cpu, Cores: cores} }
}

// plateauLevels: QPS stops at ~1,000 from c=8 while latency grows with the load.
func plateauLevels() []Level {
	return closed([3]float64{2, 400, 5}, [3]float64{8, 1000, 8}, [3]float64{32, 1010, 31.7}, [3]float64{64, 1005, 63.7})
}

func TestJudge(t *testing.T) {
	waits := &Profile{Goroutines: 140, Waits: []Wait{{Site: "sync.(*Cond).Wait (target.(*demoPool).get)", Count: 128}}}
	tests := []struct {
		name   string
		levels []Level
		open   bool
		same   bool
		want   []Kind
		conf   Confidence // of the first claim, when one is wanted
		says   string     // a phrase the first claim's text must hold
		never  string     // a phrase it must not hold
	}{
		{
			// Throughput still following load, CPU low, no errors: nothing to claim.
			name:   "healthy",
			levels: with(closed([3]float64{1, 1000, 1}, [3]float64{2, 2000, 1}, [3]float64{4, 3900, 1.02}), target(0.3, 2)),
		},
		{
			// CPU at its cores on a plateau: CPU-bound, with the top functions named.
			name: "cpu bound",
			levels: with(plateauLevels(), func(i int, l *Level) {
				l.Target = &Usage{CPUCores: []float64{0.8, 1.9, 1.95, 1.96}[i], Cores: 2}
				l.Profile = &Profile{TopCum: []Function{{"main.handler", 90}, {"encoding/json.Marshal", 45}}, GCPct: 12, AllocPct: 18}
			}),
			want: []Kind{TargetCPU}, conf: High, says: "encoding/json.Marshal 45%",
		},
		{
			// CPU full but the sweep stopped before a plateau: claimed with less confidence.
			name:   "cpu bound without plateau",
			levels: with(closed([3]float64{1, 500, 2}, [3]float64{2, 900, 2.2}), target(1.9, 2)),
			want:   []Kind{TargetCPU}, conf: Medium, says: "not measured",
		},
		{
			// Same machine, target and generator fill it together: the target is CPU-bound.
			name: "cpu bound sharing the machine",
			levels: with(plateauLevels(), func(_ int, l *Level) {
				l.Target = &Usage{CPUCores: 1.5}
				l.Generator = &Usage{CPUCores: 0.4, Cores: 2}
			}),
			same: true, want: []Kind{TargetCPU}, conf: High, says: "machine's 2 cores were full",
		},
		{
			// A busy machine: the target got little CPU but its threads queued for more: CPU-bound, not waiting.
			name: "cpu starved on a busy machine",
			levels: with(plateauLevels(), func(_ int, l *Level) {
				l.Target = &Usage{CPUCores: 0.5, RunWaitCores: 1.3, Cores: 2}
			}),
			want: []Kind{TargetCPU}, conf: High, says: "it wanted 1.80 of its 2 cores",
		},
		{
			// Short of its core by CPU time alone (0.80), but it waited for the rest: CPU-bound.
			name: "cpu wanted with a short wait",
			levels: with(plateauLevels(), func(_ int, l *Level) {
				l.Target = &Usage{CPUCores: 0.8, RunWaitCores: 0.1, Cores: 1}
			}),
			want: []Kind{TargetCPU}, conf: High, says: "it wanted 0.90 of its 1 cores",
		},
		{
			// An idle target on a busy machine: many short wake-ups queue, but it uses little CPU: waiting.
			name: "idle target on a busy machine",
			levels: with(plateauLevels(), func(_ int, l *Level) {
				l.Target = &Usage{CPUCores: 0.1, RunWaitCores: 1.5, Cores: 2}
			}),
			want: []Kind{TargetWaiting}, conf: Medium, says: "target CPU only 0.10 of 2 cores",
		},
		{
			// CPU unknown, but most busy goroutines run: CPU-bound (medium), not waiting.
			name: "running goroutines",
			levels: with(plateauLevels(), func(_ int, l *Level) {
				l.Profile = &Profile{Goroutines: 64, Waits: []Wait{{Site: "main.hash", Count: 60, Reason: "running"}}}
			}),
			want: []Kind{TargetCPU}, conf: Medium, says: "94% of 64 request goroutines were running",
		},
		{
			// Plateau, latency growing, CPU idle, wait sites known: waiting, high.
			name: "waiting with sites",
			levels: with(plateauLevels(), func(_ int, l *Level) {
				l.Target = &Usage{CPUCores: 0.2, Cores: 2}
				l.Profile = waits
			}),
			want: []Kind{TargetWaiting}, conf: High, says: "128 of 140 request goroutines wait in sync.(*Cond).Wait",
		},
		{
			// Block and mutex profiles enabled: their top sites are named beside the goroutine waits.
			name: "waiting with contention profiles",
			levels: with(plateauLevels(), func(_ int, l *Level) {
				l.Target = &Usage{CPUCores: 0.2, Cores: 2}
				l.Profile = &Profile{Goroutines: 140, Waits: waits.Waits,
					Block: []Contention{{Site: "sync.(*Mutex).Lock from target.(*demoPool).get", Events: 700, Waiting: 59.8, Pct: 99.6}},
					Mutex: []Contention{{Site: "sync.(*Mutex).Unlock from target.(*demoPool).put", Events: 650, Waiting: 56.6, Pct: 99}}}
			}),
			want: []Kind{TargetWaiting}, conf: High,
			says: "mutex profile at c=64: the lock released in sync.(*Mutex).Unlock from target.(*demoPool).put kept 56.6 goroutines waiting",
		},
		{
			// Only a block profile, no goroutine profile: it names the site, and the claim is high.
			name: "waiting named by the block profile",
			levels: with(plateauLevels(), func(_ int, l *Level) {
				l.Target = &Usage{CPUCores: 0.2, Cores: 2}
				l.Profile = &Profile{Block: []Contention{{Site: "sync.(*Cond).Wait from main.(*pool).get", Events: 90, Waiting: 30, Pct: 95}}}
			}),
			want: []Kind{TargetWaiting}, conf: High, says: "the block profile names sync.(*Cond).Wait from main.(*pool).get",
		},
		{
			// Contention too small to matter (the server's own short waits): not evidence.
			name: "negligible contention",
			levels: with(plateauLevels(), func(_ int, l *Level) {
				l.Target = &Usage{CPUCores: 0.2, Cores: 2}
				l.Profile = &Profile{Mutex: []Contention{{Site: "sync.(*Mutex).Unlock from net/http.(*conn).serve", Events: 3, Waiting: 0.001, Pct: 100}}}
			}),
			want: []Kind{TargetWaiting}, conf: Medium, says: "target CPU only 0.20 of 2 cores", never: "mutex profile",
		},
		{
			// A noisy plateau whose last level is the peak by a hair: still flat (+18% for 4x load).
			name:   "noisy plateau",
			levels: with(closed([3]float64{4, 550, 7}, [3]float64{16, 510, 31}, [3]float64{64, 600, 106}), target(0.1, 2)),
			want:   []Kind{TargetWaiting}, conf: Medium, says: "from c=4 to c=64",
		},
		{
			// Plateau, CPU idle, no profile: waiting, medium, and a note asking for --pprof.
			name:   "waiting without sites",
			levels: with(plateauLevels(), target(0.2, 2)),
			want:   []Kind{TargetWaiting}, conf: Medium, says: "target CPU only 0.20 of 2 cores",
		},
		{
			// Plateau with CPU unknown and no profile: silence, not a guess.
			name:   "plateau without evidence",
			levels: plateauLevels(),
		},
		{
			// Plateau with CPU unknown but wait sites: waiting, low.
			name:   "plateau with sites only",
			levels: with(plateauLevels(), func(_ int, l *Level) { l.Profile = waits }),
			want:   []Kind{TargetWaiting}, conf: Low, says: "wait in sync.(*Cond).Wait",
		},
		{
			// The generator at its cores past the peak: generator-bound; waiting is not judged.
			name: "generator bound",
			levels: with(plateauLevels(), func(_ int, l *Level) {
				l.Generator = &Usage{CPUCores: 1.9, Cores: 2, SchedSlowPct: 30}
				l.Target = &Usage{CPUCores: 0.3, Cores: 4}
			}),
			want: []Kind{GeneratorBound}, conf: High, says: "apiperf used 1.90 of its 2 cores",
		},
		{
			// One thread busy 0.80 of its core that waited 0.15 s/s for it on a busy machine:
			// it wanted its core, generator-bound, though its CPU time alone is short of it.
			name: "generator kept off its core",
			levels: with(plateauLevels(), func(_ int, l *Level) {
				l.Generator = &Usage{CPUCores: 0.8, RunWaitCores: 0.15, Cores: 1}
				l.Target = &Usage{CPUCores: 0.05, Cores: 2}
				l.Machine = &Machine{CPUs: 2, Busy: 0.95} // nobody else took CPU
			}),
			same: true, want: []Kind{GeneratorBound}, conf: High, says: "it wanted 0.95 of its 1 cores",
		},
		{
			// Under three other busy processes one thread got 0.45 of its core and waited
			// 0.65 s/s for it (measured): still generator-bound, but the CPU was taken by
			// others (1.5 cores): medium, and the claim says so.
			name: "generator on a crowded machine",
			levels: with(plateauLevels(), func(_ int, l *Level) {
				l.Generator = &Usage{CPUCores: 0.45, RunWaitCores: 0.65, Cores: 1}
				l.Target = &Usage{CPUCores: 0.05, Cores: 2}
				l.Machine = &Machine{CPUs: 2, Busy: 2}
			}),
			same: true, want: []Kind{GeneratorBound}, conf: Medium, says: "shared with other processes (1.50 cores at c=32)",
		},
		{
			// The same wait with the machine not measured: others may have caused it, medium.
			name: "generator starved, machine unknown",
			levels: with(plateauLevels(), func(_ int, l *Level) {
				l.Generator = &Usage{CPUCores: 0.45, RunWaitCores: 0.65, Cores: 1}
				l.Target = &Usage{CPUCores: 0.05, Cores: 2}
			}),
			same: true, want: []Kind{GeneratorBound}, conf: Medium, says: "not measured: the machine's CPU",
		},
		{
			// A generator at half its core that waited little: not at its core, no claim.
			name: "generator short of its core",
			levels: with(closed([3]float64{1, 1000, 1}, [3]float64{2, 2000, 1}, [3]float64{4, 3900, 1.02}), func(_ int, l *Level) {
				l.Generator = &Usage{CPUCores: 0.6, RunWaitCores: 0.1, Cores: 1}
			}),
		},
		{
			// A nearly idle generator whose many short wake-ups queued on a busy machine: its
			// wait is other processes' doing, not CPU it needed; no claim.
			name: "idle generator on a busy machine",
			levels: with(closed([3]float64{1, 1000, 1}, [3]float64{2, 2000, 1}, [3]float64{4, 3900, 1.02}), func(_ int, l *Level) {
				l.Generator = &Usage{CPUCores: 0.2, RunWaitCores: 1.5, Cores: 2}
				l.Target = &Usage{CPUCores: 0.3, Cores: 2}
			}),
		},
		{
			// Open loop behind its schedule: generator-bound, medium.
			name: "open loop late sends",
			open: true,
			levels: with(closed([3]float64{1000, 1000, 1}, [3]float64{2000, 1990, 1}), func(_ int, l *Level) {
				l.Open, l.Scheduled, l.LateSends, l.MaxLag = true, 10000, 800, 30*time.Millisecond
			}),
			want: []Kind{GeneratorBound}, conf: Medium, says: "8.0% of requests were sent late",
		},
		{
			// Goroutines rising within every level and never back: a leak, with its site.
			name: "goroutine leak",
			levels: with(closed([3]float64{1, 500, 2}, [3]float64{2, 1000, 2}, [3]float64{4, 2000, 2}), func(i int, l *Level) {
				l.Target = &Usage{CPUCores: 0.2, Cores: 2, Goroutines: []float64{1000, 3000, 7000}[i], GoroutineRise: []float64{1000, 2000, 4000}[i]}
				l.Profile = &Profile{Goroutines: 7000, Waits: []Wait{{Site: "target.apiperfLeak", Count: 6990}}}
			}),
			want: []Kind{Growth}, conf: High, says: "6,990 of 7,000 request goroutines wait in target.apiperfLeak",
		},
		{
			// Goroutines that follow the load but stay flat within a level: no leak.
			name: "goroutines follow load",
			levels: with(closed([3]float64{10, 500, 20}, [3]float64{100, 1000, 20}, [3]float64{200, 2000, 100}), func(i int, l *Level) {
				l.Target = &Usage{CPUCores: 0.2, Cores: 2, Goroutines: []float64{30, 210, 410}[i], GoroutineRise: []float64{0, 2, 1}[i]}
			}),
		},
		{
			// Errors from the second level on, mostly connect: where and which class.
			name: "connect errors",
			levels: with(closed([3]float64{1, 500, 2}, [3]float64{2, 1000, 2}, [3]float64{4, 2000, 2}), func(i int, l *Level) {
				if i > 0 {
					l.Errors = measure.Errors{Connect: 300, Timeout: 10}
					l.Attempts = 10000
				}
			}),
			want: []Kind{ErrorsStart}, conf: High, says: "errors start at c=2, mostly connect",
		},
		{
			// A trickle of errors under errorStartPct is not a claim.
			name: "few errors",
			levels: with(closed([3]float64{1, 500, 2}, [3]float64{2, 1000, 2}), func(_ int, l *Level) {
				l.Errors, l.Attempts = measure.Errors{Timeout: 1}, 1000
			}),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Judge(Input{Levels: tt.levels, Peak: peakOf(tt.levels), MachineCores: 2, SameMachine: tt.same})
			if got := v.Kinds(); !slices.Equal(got, tt.want) {
				t.Fatalf("Judge: kinds %v, want %v\n%+v", got, tt.want, v)
			}
			if len(tt.want) == 0 {
				return
			}
			c := v.Claims[0]
			if c.Confidence != tt.conf {
				t.Errorf("Judge: %s confidence %s, want %s (%v)", c.Kind, c.Confidence, tt.conf, c.Evidence)
			}
			text := c.Summary + "\n" + strings.Join(c.Evidence, "\n")
			if !strings.Contains(text, tt.says) {
				t.Errorf("Judge: %s says\n%s\nwant it to contain %q", c.Kind, text, tt.says)
			}
			if tt.never != "" && strings.Contains(text, tt.never) {
				t.Errorf("Judge: %s says\n%s\nwant nothing about %q", c.Kind, text, tt.never)
			}
		})
	}
}

func TestSilence(t *testing.T) {
	v := Judge(Input{Levels: plateauLevels(), Peak: 2})
	if len(v.Claims) != 0 {
		t.Fatalf("Judge without target evidence: claims %v, want none", v.Kinds())
	}
	joined := strings.Join(v.Silent, "\n")
	for _, want := range []string{"target CPU: not measured", "target's CPU is unknown"} {
		if !strings.Contains(joined, want) {
			t.Errorf("Silent = %q, want a note containing %q", v.Silent, want)
		}
	}
}

func TestLittle(t *testing.T) {
	tests := []struct {
		name  string
		level Level
		ok    bool
		ratio float64
	}{
		// 1,000 req/s x 10 ms = 10 in flight on 10 connections: consistent.
		{"consistent", Level{Label: "c=10", Load: 10, QPS: 1000, Mean: 10 * time.Millisecond}, true, 1},
		// 500 req/s x 10 ms = 5 on 10 connections: half the time idle between requests.
		{"idle connections", Level{Label: "c=10", Load: 10, QPS: 500, Mean: 10 * time.Millisecond}, false, 0.5},
		// Open loop: no concurrency to compare with; the figure is informative.
		{"open loop", Level{Label: "rate=100/s", Load: 100, QPS: 100, Mean: 20 * time.Millisecond, Open: true}, true, 0},
	}
	for _, tt := range tests {
		c := Judge(Input{Levels: []Level{tt.level}, Peak: 0}).Little[0]
		if c.OK != tt.ok || c.Ratio != tt.ratio {
			t.Errorf("%s: little = ok %v ratio %v (%s), want ok %v ratio %v", tt.name, c.OK, c.Ratio, c.Note, tt.ok, tt.ratio)
		}
	}
}

func TestNum(t *testing.T) {
	for v, want := range map[float64]string{4812: "4,812", 1234567: "1,234,567", 12.5: "12.5", 0: "0", 999: "999"} {
		if got := num(v); got != want {
			t.Errorf("num(%v) = %q, want %q", v, got, want)
		}
	}
}

// A closed loop whose connections are reset reconnects at once and uses whatever CPU it
// gets (measured on the --max-conns demo at c=32: 0.81 of 2 cores used, 1.06 s/s waited,
// 13,000 connects a second): the errors are the story, not the generator.
func TestGeneratorNotJudgedOnBrokenConnections(t *testing.T) {
	levels := with(closed([3]float64{4, 374, 10.7}, [3]float64{8, 696, 11.5}, [3]float64{32, 1116, 12.5}), func(i int, l *Level) {
		l.Generator = &Usage{CPUCores: []float64{0.04, 0.03, 0.81}[i], RunWaitCores: []float64{0.06, 0.2, 1.06}[i], Cores: 2}
		l.Target = &Usage{CPUCores: []float64{0.06, 0.06, 0.59}[i], Cores: 2}
	})
	levels[2].Attempts, levels[2].Errors = 45756, measure.Errors{Connect: 17604, Read: 25773, Write: 132}
	v := Judge(Input{Levels: levels, Peak: 2, MachineCores: 2, SameMachine: true})
	if got := v.Kinds(); !slices.Equal(got, []Kind{ErrorsStart}) {
		t.Fatalf("Judge: kinds %v, want only errors\n%+v", got, v)
	}
	if s := strings.Join(v.Silent, "\n"); !strings.Contains(s, "generator: not judged at c=32, where 95.1% of attempts lost their connection") {
		t.Errorf("Silent = %q, want the generator not judged at c=32", v.Silent)
	}
	// The same level without the broken connections: apiperf wanted 1.87 of its 2 cores.
	levels[2].Errors = measure.Errors{}
	if v := Judge(Input{Levels: levels, Peak: 2, MachineCores: 2, SameMachine: true}); !v.Has(GeneratorBound) {
		t.Errorf("Judge without errors: kinds %v, want generator-bound", v.Kinds())
	}
}

// The CPU claim's place is the application frame and its library; without one, the hottest
// function the requests reach, never a runtime helper; the allocating frame only when GC
// and allocation take a large share.
func TestPlaceSummary(t *testing.T) {
	th := DefaultThresholds
	p := &Profile{HotPlace: "main.rules (55%), in regexp (regexp.MustCompile)", AllocPlace: "main.rules (80%), in regexp (regexp.compile)",
		Hot: []Function{{Name: "runtime.memclrNoHeapPointers", Pct: 7}}, GCPct: 5, AllocPct: 10}
	if got, want := p.placeSummary(th), "; most of its CPU is below main.rules (55%), in regexp (regexp.MustCompile)"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	p.GCPct = 20
	if got := p.placeSummary(th); !strings.Contains(got, "GC and allocation take 30% of it, the bytes allocated mostly below main.rules (80%)") {
		t.Errorf("summary %q, want the allocation site with GC at 30%%", got)
	}
	lanes := &Profile{HotPlace: "main.main.func1 (4%), in golang.org/x/crypto/argon2 (golang.org/x/crypto/argon2.IDKey)", HotPlacePct: 4,
		HotPackages: []Function{{Name: "runtime", Pct: 30}, {Name: "golang.org/x/crypto/argon2", Pct: 60}}}
	if got := lanes.placeSummary(th); got != "; most of its CPU is in golang.org/x/crypto/argon2 (60% self), called below main.main.func1 (4%), in golang.org/x/crypto/argon2 (golang.org/x/crypto/argon2.IDKey)" {
		t.Errorf("summary of work in a library's goroutines %q, want the library by its self time", got)
	}
	old := &Profile{Hot: []Function{{Name: "runtime.memclrNoHeapPointers", Pct: 7}, {Name: "runtime.futex", Pct: 5}, {Name: "regexp/syntax.(*parser).push", Pct: 4}}}
	if got := old.placeSummary(th); got != "; the hottest function is regexp/syntax.(*parser).push (4% self)" {
		t.Errorf("summary without places %q, want the hottest function outside the runtime", got)
	}
}
