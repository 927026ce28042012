package load

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/apiperf/apiperf/internal/testenv"
	"github.com/apiperf/apiperf/measure"
)

// loadProcessEnv, in a copy of this test binary, names the URL to load and the I/O path
// (loadProcess).
const loadProcessEnv = "APIPERF_LOAD_PROCESS"

func TestTimingOpenLoopLongStall(t *testing.T) {
	if v := os.Getenv(loadProcessEnv); v != "" {
		loadProcess(t, v)
		return
	}
	testenv.Timing(t)
	openIO(t, testOpenLoopLongStall)
}

// testOpenLoopLongStall: the generator, a process of its own, is stopped for 2 s (SIGSTOP,
// as a loaded CI runner or a swapped-out process is) in the middle of an open loop at 1000
// req/s over 20 connections; 2,000 requests fall due at once. The target, here, counts the
// connections it accepts: the pool drains that backlog by itself and grows by little (before,
// it opened a connection for most of the late requests: thousands).
func testOpenLoopLongStall(t *testing.T, mode ioMode) {
	var accepted, served atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		w.Write([]byte("ok"))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			accepted.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestTimingOpenLoopLongStall$")
	cmd.Env = append(os.Environ(), loadProcessEnv+"="+string(rune('0'+mode))+srv.URL)
	out := startChild(t, cmd)
	for served.Load() < 300 { // 0.3 s into the run: the pool is open and at work
		time.Sleep(time.Millisecond)
	}
	before := accepted.Load()
	cmd.Process.Signal(syscall.SIGSTOP)
	time.Sleep(2 * time.Second)
	cmd.Process.Signal(syscall.SIGCONT)
	var s measure.Step
	line, _ := out.ReadString('\n')
	if err := json.Unmarshal([]byte(line), &s); err != nil {
		t.Fatalf("the load process said %q: %v", line, err)
	}
	t.Logf("accepted %d connections before the stop, %d in all; open %+v; errors %+v; successes %d; warnings %q",
		before, accepted.Load(), s.Open, s.Errors, s.Successes, s.Warnings)
	if s.Open == nil || s.Open.MaxLag < measure.Duration(1500*time.Millisecond) {
		t.Fatalf("open %+v: want a send lag of the 2s stop (it did not land in the window)", s.Open)
	}
	if n := accepted.Load(); n > 60 {
		t.Errorf("the target accepted %d connections (%d before the stop); want at most 60 for a pool of 20 whose backlog was its generator's", n, before)
	}
	if s.Errors.Total() != 0 || s.Successes < 3300 {
		t.Errorf("errors %+v, successes %d; want none and about 3500", s.Errors, s.Successes)
	}
}

// loadProcess runs, in a copy of the test binary, an open loop of 3.5 s at 1000 req/s over 20
// connections on v's I/O path (its first byte) against v's URL (the rest), and prints its step
// as one line of JSON.
func loadProcess(t *testing.T, v string) {
	s := run(t, ioMode(v[0]-'0'), context.Background(), v[1:],
		Config{Rate: 1000, Duration: measure.Duration(3500 * time.Millisecond), Connections: 20, Threads: 1, Timeout: measure.Duration(5 * time.Second)})
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout.Write(append(b, '\n'))
}

// TestBacklogWatch walks the growth rule through its cases at 1000 req/s (allow: 51), checked
// every millisecond, with a response time of 100 us.
func TestBacklogWatch(t *testing.T) {
	const ms, rt = int64(time.Millisecond), int64(100 * time.Microsecond)
	t.Run("a backlog a running generator sees grows the pool when it does not shrink", func(t *testing.T) {
		w := newBacklogWatch(1000)
		if g := w.grow(1*ms, 2, rt); g != 0 {
			t.Errorf("first sighting: grow %d, want 0", g)
		}
		if g := w.grow(2*ms, 3, rt); g != 3 {
			t.Errorf("no smaller a millisecond later: grow %d, want 3", g)
		}
	})
	t.Run("a stop's debt that drains opens nothing, however long it takes", func(t *testing.T) {
		w := newBacklogWatch(1000)
		w.grow(1*ms, 2000, rt) // 2 s of requests at once: 1949 of them a debt
		for i, n := int64(2), int64(2000); n > 0; i, n = i+1, n-5+1 {
			// the pool sends 5 a millisecond and 1 falls due; every 3rd check it sends none
			if i%3 == 0 {
				n += 5
			}
			if g := w.grow(i*ms, n, rt); g != 0 {
				t.Fatalf("at %d ms, backlog %d: grow %d while the debt drains", i, n, g)
			}
		}
	})
	t.Run("a debt that stops shrinking lets what is above it grow the pool, never the debt", func(t *testing.T) {
		w := newBacklogWatch(1000)
		w.grow(1*ms, 2000, rt)
		var grown int64
		n := int64(2000)
		for i := int64(2); i < 400; i++ {
			n++ // the target holds every connection: nothing is sent
			g := w.grow(i*ms, n, rt)
			if g > 0 && time.Duration((i-1)*ms) < debtHold {
				t.Fatalf("at %d ms: grow %d before the debt was held for %v", i, g, debtHold)
			}
			grown += g
			n -= g // the new connections take requests (the oldest: the debt's)
		}
		if grown < 300 || grown > 450 {
			t.Errorf("grew %d over 400 ms of 1 request a millisecond above a debt of 1949; want about 400 (what fell due since), not the debt", grown)
		}
	})
}
