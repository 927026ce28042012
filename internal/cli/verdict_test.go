package cli

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/internal/testenv"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/target"
	"github.com/apiperf/apiperf/verdict"
)

// spawnDemo starts `apiperf serve --demo` as a child process with extra environment
// variables (e.g. GOMAXPROCS) and serve flags, and returns it.
func spawnDemo(t *testing.T, env []string, serve ...string) *target.Process {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(asApiperfEnv, "1")
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v) // the child inherits it; this process read its own at start
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	p, err := target.Spawn(ctx, exe, append([]string{"--demo"}, serve...)...)
	if err != nil {
		cancel()
		t.Fatalf("spawning apiperf serve --demo: %v", err)
	}
	t.Cleanup(func() {
		p.Stop()
		cancel()
	})
	return p
}

// judgeDemo sweeps path of a demo target with everything the verdict reads (pprof,
// metrics, /proc) and returns the run's verdict.
func judgeDemo(t *testing.T, p *target.Process, path string, plan ...string) *verdict.Verdict {
	t.Helper()
	dir := t.TempDir()
	args := append([]string{"sweep", "-d", "2s", "--warmup", "300ms", "--no-stop", "-q", "--no-history",
		"--pprof", p.URL() + "/debug/pprof", "--metrics", p.URL() + "/metrics", "--target-pid", strconv.Itoa(p.Pid()),
		"--profile-levels", "last", "--dir", dir, "--name", "demo"}, plan...)
	args = append(args, p.URL()+path)
	code, stdout, stderr := runCLI(t, args...)
	if code != ExitOK {
		t.Fatalf("apiperf %s = %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, stdout, stderr)
	}
	if !strings.Contains(stdout, "verdict: ") {
		t.Errorf("apiperf sweep printed no verdict:\n%s", stdout)
	}
	r, err := result.Load(filepath.Join(dir, "demo"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict == nil {
		t.Fatalf("run.json has no verdict")
	}
	t.Logf("%s on %s:\n%s", strings.Join(plan, " "), path, stdout[strings.Index(stdout, "verdict: "):])
	return r.Verdict
}

// TestTimingVerdictOnDemoTargets (make timing) is issue 18's check: each demo setup has
// exactly one bottleneck (the target's CPU, a pool, a downstream, a leak, apiperf's own CPU,
// a connection limit), and the verdict names it and nothing else; a healthy target at
// moderate load gets no bottleneck claim. Loads are short and bounded (2 s per level, three levels).
func TestTimingVerdictOnDemoTargets(t *testing.T) {
	testenv.Timing(t) // the verdict reads CPU shares: it needs the serial pass, without -race
	if testing.Short() {
		t.Skip("sweeps demo targets for about a minute")
	}
	burn := filepath.Join("..", "..", "examples", "lua", "burn.lua") // README's example script
	tests := []struct {
		name  string
		env   []string
		serve []string // serve flags beside --demo
		path  string
		plan  []string
		want  []verdict.Kind
		names []string // what the claim's evidence must name
		never string   // what it must not mention
	}{
		// One core of pure arithmetic per request: CPU-bound, the spinning function named.
		// GOMAXPROCS=1 below the machine's cores is a second, true limit: the execution trace's
		// gomaxprocs-limited claim may stand beside it (see optional below).
		{"cpu", []string{"GOMAXPROCS=1"}, nil, "/demo/cpu", []string{"--levels", "1,4,16"},
			[]verdict.Kind{verdict.TargetCPU}, []string{"apiperfHotHandlerSpin"}, ""},
		// Four pool slots held 5 ms each: waiting, in the pool's get; the pool turns on the
		// block and mutex profiles, which name its lock too.
		{"pool", nil, nil, "/demo/pool", []string{"--levels", "4,16,64"}, []verdict.Kind{verdict.TargetWaiting},
			[]string{"wait in sync.Mutex: waiting for the lock from github.com/apiperf/apiperf/target.(*demoPool).get",
				"blocked in sync.Mutex: waiting for the lock from github.com/apiperf/apiperf/target.(*demoPool).get",
				"the lock released in sync.(*Mutex).Unlock from github.com/apiperf/apiperf/target.(*demoPool).put"}, ""},
		// A downstream reached over four connections: waiting, in the call to it; no block or
		// mutex profile is enabled there, and the verdict says nothing of them.
		{"downstream", nil, nil, "/demo/downstream", []string{"--levels", "4,16,64"},
			[]verdict.Kind{verdict.TargetWaiting}, []string{"downstream).call"}, "profile at"},
		// A goroutine and 16 KiB left behind per request, at rates it serves easily: growth.
		{"leak", nil, nil, "/demo/leak", []string{"--rates", "100,200,300"},
			[]verdict.Kind{verdict.Growth}, []string{"apiperfLeakedWatcher"}, ""},
		// apiperf on one thread whose script burns CPU for every request, against a cheap
		// endpoint: the generator is the bottleneck, and its CPU is named.
		{"generator", nil, nil, "/healthz", []string{"-t", "1", "-s", burn, "--levels", "1,4,16"},
			[]verdict.Kind{verdict.GeneratorBound}, []string{"of its 1 cores"}, ""},
		// A target that resets connections beyond 16 open at once (10 ms per request): 4
		// and 8 connections (beside the profile and metrics clients') are served, at 32 the
		// errors start, and the verdict names them resets of a connection limit. A closed
		// loop: an open loop's pool grows whenever a busy machine delays its sends, so where
		// its errors start would depend on the machine.
		{"errors", nil, []string{"--max-conns", "16"}, "/knob?delay=10ms", []string{"--levels", "4,8,32"},
			[]verdict.Kind{verdict.ErrorsStart}, []string{"at c=32, mostly"}, ""},
		// Plain net/http at a moderate rate: nothing to claim.
		{"healthy", nil, nil, "/healthz", []string{"--rates", "100,200,300"}, nil, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := judgeDemo(t, spawnDemo(t, tt.env, tt.serve...), tt.path, tt.plan...)
			// optional: a claim that is true of how the case runs the target (GOMAXPROCS=1).
			optional := func(k verdict.Kind) bool {
				return k == verdict.GOMAXPROCSLimited && slices.Contains(tt.env, "GOMAXPROCS=1")
			}
			if got := slices.DeleteFunc(v.Kinds(), optional); !slices.Equal(got, tt.want) {
				t.Fatalf("verdict on %s = %v, want exactly %v:\n%s", tt.path, got, tt.want, verdictDump(v))
			}
			if len(v.Claims) == 0 {
				return
			}
			c := v.Claims[0]
			text := c.Summary + "\n" + strings.Join(c.Evidence, "\n")
			for _, name := range tt.names {
				if !strings.Contains(text, name) {
					t.Errorf("verdict on %s does not name %s:\n%s", tt.path, name, text)
				}
			}
			if tt.never != "" && strings.Contains(text, tt.never) {
				t.Errorf("verdict on %s mentions %q:\n%s", tt.path, tt.never, text)
			}
		})
	}
}

func verdictDump(v *verdict.Verdict) string {
	var b strings.Builder
	for _, c := range v.Claims {
		b.WriteString(c.String() + "\n  " + strings.Join(c.Evidence, "\n  ") + "\n")
	}
	b.WriteString("silent: " + strings.Join(v.Silent, "; "))
	return b.String()
}

// TestTimingVerdictBusyCore is issue 27's check of README's Explain example with another
// process spinning on one of the cores: the demo's CPU-heavy handler is not "waiting", and
// no claim is high for target-waiting or generator-bound. The sweep is README's command,
// without --target-pid: apiperf finds the demo's process itself.
func TestTimingVerdictBusyCore(t *testing.T) {
	testenv.Timing(t)
	if testing.Short() {
		t.Skip("sweeps the demo for about ten seconds")
	}
	busy := testenv.BusyChild(t)
	if _, err := testenv.Pin(busy, 0); err != nil {
		t.Skipf("cannot pin the busy loop to core 0: %v", err)
	}
	p := spawnDemo(t, nil)
	dir := t.TempDir()
	code, stdout, stderr := runCLI(t, "sweep", "--levels", "5,20", "-d", "3s", "--warmup", "500ms", "--no-history",
		"--pprof", p.URL()+"/debug/pprof", "--metrics", p.URL()+"/metrics", "--dir", dir, "--name", "busy", p.URL()+"/api/users/7")
	if code != ExitOK {
		t.Fatalf("apiperf sweep = %d\n%s\n%s", code, stdout, stderr)
	}
	if want := "target process " + strconv.Itoa(p.Pid()); !strings.Contains(stderr, want) {
		t.Errorf("stderr does not say %q:\n%s", want, stderr)
	}
	r, err := result.Load(filepath.Join(dir, "busy"))
	if err != nil {
		t.Fatal(err)
	}
	v := r.Verdict
	t.Logf("%s", stdout[strings.Index(stdout, "verdict: "):])
	if v.Has(verdict.TargetWaiting) {
		t.Errorf("the CPU-heavy demo on a machine with a busy core: %s", v.Claim(verdict.TargetWaiting))
	}
	if c := v.Claim(verdict.GeneratorBound); c != nil && c.Confidence == verdict.High {
		t.Errorf("generator-bound high on a busy machine: %s", c)
	}
	if !v.SharedMachine() {
		t.Errorf("the verdict does not say other processes took CPU: %+v", v.Machine)
	}
}
