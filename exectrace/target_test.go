package exectrace

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/apiperf/apiperf/internal/tracetarget"
)

// The tests here read traces of real processes (internal/tracetarget), run with the GOGC
// and GOMAXPROCS each test sets, loaded over loopback for a bounded time.

// loadFor sends GETs to url from conns goroutines until ctx ends; done counts responses.
func loadFor(ctx context.Context, url string, conns int, done *atomic.Int64) *sync.WaitGroup {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conns}, Timeout: 5 * time.Second}
	var wg sync.WaitGroup
	for range conns {
		wg.Go(func() {
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
				resp, err := client.Do(req)
				if err != nil {
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				done.Add(1)
			}
		})
	}
	return &wg
}

// traceUnderLoad loads base+path with conns connections, records a trace of the given
// length once the load runs, and returns its summary and the responses completed meanwhile.
func traceUnderLoad(t *testing.T, base, path string, conns int, length time.Duration) (*Summary, int64, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), length+10*time.Second)
	defer cancel()
	var done atomic.Int64
	wg := loadFor(ctx, base+path, conns, &done)
	defer wg.Wait()
	defer cancel()
	time.Sleep(300 * time.Millisecond) // settle
	before := done.Load()
	resp, err := http.Get(fmt.Sprintf("%s/debug/pprof/trace?seconds=%g", base, length.Seconds()))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	n := done.Load() - before
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET trace: %v %v", resp.Status, err)
	}
	s, err := Read(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("Read(trace of %s) = %v", path, err)
	}
	t.Logf("%s: %d responses during the trace; %s", path, n, s.Line())
	return s, n, b
}

// TestGCCyclesFollowGOGC: the target allocates 64 KiB per request over an 8 MiB live heap.
// A GC cycle comes every live*GOGC/100 bytes allocated, so per request GOGC=25 runs
// 400/25 = 16 times as many cycles as GOGC=400; the trace must show that ratio within 30%.
func TestGCCyclesFollowGOGC(t *testing.T) {
	perRequest := map[int]float64{}
	for _, gogc := range []int{25, 400} {
		base := tracetarget.Start(t, fmt.Sprintf("GOGC=%d", gogc), "GOMAXPROCS=2")
		s, n, _ := traceUnderLoad(t, base, tracetarget.Alloc, 4, 2*time.Second)
		if s.GCCycles < 8 {
			// A slow machine: too few cycles to count within 30%; trace longer once.
			s, n, _ = traceUnderLoad(t, base, tracetarget.Alloc, 4, 6*time.Second)
		}
		if n == 0 || s.GCCycles == 0 {
			t.Fatalf("GOGC=%d: %d responses, %d GC cycles in the trace; want both > 0", gogc, n, s.GCCycles)
		}
		perRequest[gogc] = float64(s.GCCycles) / float64(n)
		if s.STWWorkMax <= 0 || s.STWWorkMax > s.STWMax || s.STWStopping > s.STWTotal {
			t.Errorf("GOGC=%d: the pauses' split: collector's work up to %v of pauses up to %v, stopping %v of %v", gogc, s.STWWorkMax, s.STWMax, s.STWStopping, s.STWTotal)
		}
		if s.STWCount < s.GCCycles || s.STWMax <= 0 || s.GCWorkers <= 0 {
			t.Errorf("GOGC=%d: STW %d pauses (max %v), workers %v for %d cycles; want two pauses a cycle and worker time",
				gogc, s.STWCount, s.STWMax, s.GCWorkers, s.GCCycles)
		}
	}
	const want = 400.0 / 25
	got := perRequest[25] / perRequest[400]
	t.Logf("GC cycles per request: GOGC=25 %.4f, GOGC=400 %.5f; ratio %.1f, predicted %.0f", perRequest[25], perRequest[400], got, want)
	if got < want*0.7 || got > want*1.3 {
		t.Errorf("GC cycles per request GOGC=25 / GOGC=400 = %.1f, want %.0f within 30%%", got, want)
	}
}

// TestCPUBoundOneP: a CPU-bound handler under GOMAXPROCS=1 keeps its one P busy; its
// task and region show with their durations.
func TestCPUBoundOneP(t *testing.T) {
	base := tracetarget.Start(t, "GOMAXPROCS=1")
	s, _, _ := traceUnderLoad(t, base, tracetarget.CPU, 4, time.Second)
	// The one P is busy most of the trace; how busy depends on how fast the generator, on the
	// same machine, keeps four requests coming: 0.66 beside make test's other packages at load
	// 14. That goroutines queue behind the P (below) is what shows it CPU-bound.
	if s.GOMAXPROCS != 1 || s.BusyPs < 0.5 {
		t.Errorf("GOMAXPROCS %d, busy Ps %.2f; want 1 and at least 0.5", s.GOMAXPROCS, s.BusyPs)
	}
	if s.Sched.Count == 0 || s.Sched.P99 < 100*time.Microsecond {
		t.Errorf("scheduler latency %+v; want goroutines queued behind the one P (p99 >= 100us)", s.Sched)
	}
	for _, want := range []struct {
		spans []Span
		name  string
	}{{s.Regions, "burn"}, {s.Tasks, "cpu-request"}} {
		if len(want.spans) == 0 || want.spans[0].Name != want.name || want.spans[0].Count == 0 || want.spans[0].Mean <= 0 || want.spans[0].Max < want.spans[0].Mean {
			t.Errorf("spans %+v; want %q first with a count and durations", want.spans, want.name)
		}
	}
}

// TestChannelBlockingOnTop: a handler waiting on a channel is the top sync blocking stack.
func TestChannelBlockingOnTop(t *testing.T) {
	base := tracetarget.Start(t)
	s, _, raw := traceUnderLoad(t, base, tracetarget.Block, 8, time.Second)
	g := s.Group(GroupSync)
	if g == nil || len(g.Stacks) == 0 {
		t.Fatalf("no sync blocking group in %+v", s.Blocking)
	}
	top := g.Stacks[0]
	if top.Function() != "main.waitForToken" || top.Frames[0].Func != "runtime.chanrecv1" {
		t.Errorf("top sync stack %s (frames %v); want main.waitForToken in runtime.chanrecv1", top.Site(), top.Frames)
	}
	var channel time.Duration
	for _, st := range s.States {
		if st.State == StateChannel {
			channel = st.Time
		}
	}
	if channel < s.Span {
		t.Errorf("goroutines spent %v waiting on channels in a %v trace with 8 handlers blocked; want more than the span", channel, s.Span)
	}

	// go tool trace's own sync profile of the same trace has the same stack on top.
	file := filepath.Join(t.TempDir(), "trace.out")
	if err := os.WriteFile(file, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "tool", "trace", "-pprof=sync", file).Output()
	if err != nil {
		t.Fatalf("go tool trace -pprof=sync: %v", err)
	}
	p, err := profile.ParseData(out)
	if err != nil {
		t.Fatalf("parsing go tool trace -pprof=sync: %v", err)
	}
	var best *profile.Sample
	for _, smp := range p.Sample {
		if best == nil || smp.Value[len(smp.Value)-1] > best.Value[len(best.Value)-1] {
			best = smp
		}
	}
	var fns []string
	for _, loc := range best.Location {
		for _, l := range loc.Line {
			fns = append(fns, l.Function.Name)
		}
	}
	if !slices.Contains(fns, "main.waitForToken") {
		t.Errorf("go tool trace -pprof=sync's top stack is %v; want it through main.waitForToken as ours", fns)
	}
}
