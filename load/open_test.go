package load

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/internal/testenv"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/procfs"
	"github.com/apiperf/apiperf/target"
)

func TestTimingOpenLoopRate(t *testing.T) {
	testenv.Timing(t)
	openIO(t, testOpenLoopRate)
}

func testOpenLoopRate(t *testing.T, mode ioMode) {
	srv := startTarget(t, target.Config{})
	const rate = 1000.0
	s := run(t, mode, context.Background(), srv.URL()+"/healthz", Config{Rate: rate, Duration: measure.Duration(5 * time.Second), Connections: 8})
	achieved := float64(s.Attempts) / time.Duration(s.Elapsed).Seconds()
	if achieved < rate*0.99 || achieved > rate*1.01 {
		t.Errorf("achieved %.1f req/s (%d in %v), want %v within 1%%", achieved, s.Attempts, time.Duration(s.Elapsed), rate)
	}
	if s.Open == nil || s.Open.Scheduled != 5000 {
		t.Errorf("scheduled %+v, want 5000 requests due in 5 s at 1000/s", s.Open)
	}
	if s.Successes != s.Attempts {
		t.Errorf("successes %d of %d attempts (errors %+v)", s.Successes, s.Attempts, s.Errors)
	}
}

// expectedStallP99 computes the corrected p99 a perfect open-loop generator would see: every
// request due at d is answered at the stall schedule's release time (plus nothing else).
func expectedStallP99(sched target.StallSchedule, base time.Time, rate float64, dur time.Duration) time.Duration {
	var lat []time.Duration
	p := Pacer{Rate: rate}
	for i := int64(0); p.Due(i) < dur; i++ {
		due := base.Add(p.Due(i))
		lat = append(lat, sched.Release(due).Sub(due))
	}
	sort.Slice(lat, func(a, b int) bool { return lat[a] < lat[b] })
	return lat[int(float64(len(lat))*0.99)]
}

// TestCoordinatedOmission is wrk2's README demonstration as a test: the target pauses all
// responses for S every P. A closed-loop tester and an open loop with a fixed pool and no
// correction would hide the stall; the corrected view must not.
func TestTimingCoordinatedOmission(t *testing.T) {
	testenv.Timing(t)
	openIO(t, testCoordinatedOmission)
}

func testCoordinatedOmission(t *testing.T, mode ioMode) {
	const (
		stall = 500 * time.Millisecond
		every = 5 * time.Second
		rate  = 200.0
		dur   = 5 * time.Second
	)
	type outcome struct{ corrected, uncorrected time.Duration }
	do := func(t *testing.T, cfg Config) (outcome, time.Duration) {
		srv := startTarget(t, target.Config{Stall: stall, StallEvery: every})
		// Start the load 1 s into the server's cycle so one whole stall lands mid-run.
		sched := srv.StallSchedule()
		time.Sleep(time.Until(sched.Start.Add(time.Second)))
		base := time.Now()
		s := run(t, mode, context.Background(), srv.URL()+"/healthz", cfg)
		want := expectedStallP99(sched, base, rate, dur)
		o := outcome{corrected: s.Latency.Percentile(99)}
		if s.Uncorrected != nil {
			o.uncorrected = s.Uncorrected.Percentile(99)
		}
		t.Logf("p99 corrected %v, uncorrected %v; expected from the stall schedule %v", o.corrected, o.uncorrected, want)
		return o, want
	}
	// The no-stall latency on loopback is well under 50 ms even on a busy machine.
	const quick = 50 * time.Millisecond

	t.Run("fixed pool: corrected shows the stall, uncorrected hides it", func(t *testing.T) {
		o, want := do(t, Config{Rate: rate, Duration: measure.Duration(dur), Connections: 4, MaxConnections: 4})
		if o.corrected < want*7/10 || o.corrected > want*13/10+quick {
			t.Errorf("corrected p99 = %v, want about %v (derived from the stall schedule)", o.corrected, want)
		}
		if o.uncorrected > quick {
			t.Errorf("uncorrected p99 = %v, want near the no-stall latency (< %v): only the 4 requests in flight saw the pause", o.uncorrected, quick)
		}
	})
	t.Run("growing pool: sends are not delayed, both views show the stall", func(t *testing.T) {
		o, want := do(t, Config{Rate: rate, Duration: measure.Duration(dur), Connections: 4})
		for name, v := range map[string]time.Duration{"corrected": o.corrected, "uncorrected": o.uncorrected} {
			if v < want*7/10 || v > want*13/10+quick {
				t.Errorf("%s p99 = %v, want about %v", name, v, want)
			}
		}
	})
	t.Run("closed loop is blind to the stall, as wrk is", func(t *testing.T) {
		o, want := do(t, Config{Duration: measure.Duration(dur), Connections: 4})
		if o.corrected > want/4 {
			t.Errorf("closed-loop p99 = %v; expected it to hide the stall (well under the open-loop %v)", o.corrected, want)
		}
	})
}

// TestTimingOpenLoopPacing: on an idle loopback target with spare CPU, requests leave within
// microseconds of their due time, so the corrected latency is the uncorrected one plus almost
// nothing (issue 11: the pacer's own wake-ups must not read as the server's latency).
func TestTimingOpenLoopPacing(t *testing.T) {
	testenv.Timing(t)
	openIO(t, testOpenLoopPacing)
}

func testOpenLoopPacing(t *testing.T, mode ioMode) {
	srv := startTarget(t, target.Config{})
	const rate = 500.0
	machine := watchMachine(t)
	s := run(t, mode, context.Background(), srv.URL()+"/healthz", Config{Rate: rate, Duration: measure.Duration(3 * time.Second), Connections: 8})
	use, stolen := machine()
	if s.SendLag == nil || s.Uncorrected == nil {
		t.Fatalf("open-loop step without send lag or uncorrected histograms: %+v", s.Open)
	}
	lag50, lag99 := s.SendLag.Percentile(50), s.SendLag.Percentile(99)
	c50, u50 := s.Latency.Percentile(50), s.Uncorrected.Percentile(50)
	t.Logf("%v req/s for 3s: send lag p50 %v, p99 %v; latency p50 corrected %v, uncorrected %v (difference %v); %d late sends; warnings %q; machine %v",
		rate, lag50, lag99, c50, u50, c50-u50, s.Open.LateSends, s.Warnings, use)
	var failed []string
	if lag50 > 50*time.Microsecond {
		failed = append(failed, fmt.Sprintf("send lag p50 = %v, want under 50us", lag50))
	}
	if c50-u50 > 100*time.Microsecond {
		failed = append(failed, fmt.Sprintf("corrected p50 %v is %v above uncorrected %v, want within 100us", c50, c50-u50, u50))
	}
	if len(failed) > 0 && stolen {
		t.Skipf("not judged: the hypervisor took %.1f%% of the machine's CPU during the run (%v), so sends were late by its doing: %s",
			100*use.StealShare(), use, strings.Join(failed, "; "))
	}
	for _, f := range failed {
		t.Error(f)
	}
	if float64(s.Open.LateSends) > 0.05*float64(s.Open.Scheduled) {
		t.Logf("%d of %d sends over 1ms late: this machine was too busy to judge the late-send warning", s.Open.LateSends, s.Open.Scheduled)
		return
	}
	for _, w := range s.Warnings {
		if strings.Contains(w, "every connection was busy") {
			t.Errorf("warning %q on an idle target with 8 connections at %v req/s", w, rate)
		}
	}
}

func TestTimingOpenLoopStallNoGrowth(t *testing.T) {
	if os.Getenv("APIPERF_TARGET_PROCESS") != "" {
		targetProcess(t)
		return
	}
	testenv.Timing(t)
	openIO(t, testOpenLoopStallNoGrowth)
}

// testOpenLoopStallNoGrowth: when the generator itself stops for 100 ms (SIGSTOP to this
// process, from a child: the kernel holds every thread, as when the machine is short of CPU
// or the process is swapped out), 100 requests fall due at once. The target, in a process of
// its own, answers on; the pool of 20 connections sends them within a few milliseconds and
// does not grow for that backlog. Before, it opened a connection for each late request (to
// about 100 connections here). A timing test: under the race detector the restart after the
// stop is itself slow for a few milliseconds, as a slow target would be.
func testOpenLoopStallNoGrowth(t *testing.T, mode ioMode) {
	url := startTargetProcess(t, "^TestTimingOpenLoopStallNoGrowth$")
	stop := exec.Command("sh", "-c", fmt.Sprintf("sleep 0.6; kill -STOP %d; sleep 0.1; kill -CONT %d", os.Getpid(), os.Getpid()))
	if err := stop.Start(); err != nil {
		t.Fatal(err)
	}
	s := run(t, mode, context.Background(), url+"/healthz",
		Config{Rate: 1000, Duration: measure.Duration(1500 * time.Millisecond), Connections: 20, Threads: 1})
	if err := stop.Wait(); err != nil {
		t.Fatal(err)
	}
	if s.Open == nil || s.Open.MaxLag < measure.Duration(70*time.Millisecond) {
		t.Fatalf("open %+v: want a send lag of the 100ms stop (it did not land in the window)", s.Open)
	}
	if s.Open.Connections > 30 {
		t.Errorf("open %+v: the pool grew from 20 to %d connections for a backlog of its own making; want at most 30", s.Open, s.Open.Connections)
	}
	if s.Errors.Total() != 0 || s.Successes < 1400 {
		t.Errorf("errors %+v, successes %d; want none and about 1500", s.Errors, s.Successes)
	}
}

// startTargetProcess runs the built-in target in a copy of this test binary (test names the
// test that serves it) and returns its URL; it ends with the test.
func startTargetProcess(t *testing.T, test string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run="+test)
	cmd.Env = append(os.Environ(), "APIPERF_TARGET_PROCESS=1")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if !strings.HasPrefix(line, "http://") {
		t.Fatalf("target process said %q (%v), want its URL", line, err)
	}
	return strings.TrimSpace(line)
}

// targetProcess serves the built-in target until its standard input closes.
func targetProcess(t *testing.T) {
	srv, err := target.Start(target.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	fmt.Println(srv.URL())
	io.Copy(io.Discard, os.Stdin)
}

// stolenShare is the share of the machine's CPU a hypervisor may take during a timing test
// before its microsecond bounds say more about the host than about the code: a vCPU taken away
// for milliseconds at a time makes a request sent on time look late.
const stolenShare = 0.01

// watchMachine starts watching the machine's CPU; the function it returns gives the use since
// then, and whether a hypervisor took more than stolenShare of it (steal), so that a timing test
// can say its bounds were not judged instead of failing on the host's doing.
func watchMachine(t testing.TB) func() (use procfs.MachineUse, stolen bool) {
	t.Helper()
	first, err := procfs.ReadMachine()
	if err != nil {
		t.Logf("machine CPU not watched: %v", err)
		return func() (procfs.MachineUse, bool) { return procfs.MachineUse{}, false }
	}
	return func() (procfs.MachineUse, bool) {
		now, err := procfs.ReadMachine()
		if err != nil {
			return procfs.MachineUse{}, false
		}
		use := now.Since(first)
		return use, use.StealShare() > stolenShare
	}
}
