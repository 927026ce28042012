package profcap

import (
	"bytes"
	"context"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// enableContention turns on every block and mutex event for the test, then off again.
func enableContention(t *testing.T) {
	runtime.SetBlockProfileRate(1)
	prev := runtime.SetMutexProfileFraction(1)
	t.Cleanup(func() {
		runtime.SetBlockProfileRate(0)
		runtime.SetMutexProfileFraction(prev)
	})
}

//go:noinline
func apiperfTestContend(mu *sync.Mutex) {
	mu.Lock()
	mu.Unlock()
}

//go:noinline
func apiperfTestHold(mu *sync.Mutex, d time.Duration) {
	mu.Lock()
	time.Sleep(d)
	mu.Unlock()
}

// contend makes waiters goroutines queue on one mutex held hold at a time, rounds times.
func contend(waiters, rounds int, hold time.Duration) {
	var mu sync.Mutex
	for range rounds {
		var wg sync.WaitGroup
		mu.Lock()
		for range waiters {
			wg.Go(func() { apiperfTestContend(&mu) })
		}
		time.Sleep(hold) // they queue on the lock
		mu.Unlock()
		wg.Wait()
		apiperfTestHold(&mu, 0)
	}
}

func lookup(t *testing.T, name string) *profile.Profile {
	t.Helper()
	var buf bytes.Buffer
	if err := pprof.Lookup(name).WriteTo(&buf, 0); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestContentionSites(t *testing.T) {
	enableContention(t)
	contend(8, 3, 20*time.Millisecond)
	c, ok := ContentionSites(KindBlock, lookup(t, "block"), 3)
	if !ok || len(c.Sites) == 0 {
		t.Fatalf("ContentionSites(block) = %+v, %v; want the contended lock", c, ok)
	}
	top := c.Sites[0]
	if top.Function != "sync.(*Mutex).Lock" || !strings.HasSuffix(top.Caller, "apiperfTestContend") || top.What != "sync.Mutex: waiting for the lock" {
		t.Errorf("top block site = %s, want sync.(*Mutex).Lock from apiperfTestContend (all: %+v)", top.Site(), c.Sites)
	}
	// 8 goroutines x 3 rounds waited about 20 ms each: at least 8 x 3 x 15 ms in all.
	if top.DelayNs < int64(8*3*15*time.Millisecond) || top.Events < 24 {
		t.Errorf("top block site waited %v in %d events, want >= 360ms in >= 24", time.Duration(top.DelayNs), top.Events)
	}
	if pct := c.Pct(top); pct < 50 || pct > 100 {
		t.Errorf("top block site's share = %.1f%%, want most of the blocked time", pct)
	}
	m, ok := ContentionSites(KindMutex, lookup(t, "mutex"), 3)
	if !ok || len(m.Sites) == 0 {
		t.Fatalf("ContentionSites(mutex) = %+v, %v; want the lock's holder", m, ok)
	}
	// The mutex profile names who held the lock: this test's Unlock, not the waiters.
	if !slices.ContainsFunc(m.Sites, func(s ContendSite) bool {
		return s.Function == "sync.(*Mutex).Unlock" && strings.HasSuffix(s.Caller, ".contend")
	}) {
		t.Errorf("mutex sites = %+v, want sync.(*Mutex).Unlock from contend", m.Sites)
	}

	// A profile with its sample types but no samples (not enabled): nothing to say.
	empty := &profile.Profile{SampleType: []*profile.ValueType{{Type: "contentions", Unit: "count"}, {Type: "delay", Unit: "nanoseconds"}}}
	if c, ok := ContentionSites(KindBlock, empty, 0); ok || len(c.Sites) != 0 {
		t.Errorf("ContentionSites(empty) = %+v, %v; want nothing", c, ok)
	}
}

// TestCaptureContention: a target that enabled block and mutex profiles has them fetched
// as delta profiles over the CPU profile's second, naming the lock its requests wait on.
func TestCaptureContention(t *testing.T) {
	enableContention(t)
	srv := pprofServer(t)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				contend(4, 1, 5*time.Millisecond)
			}
		}
	}()
	req := Request{Base: srv.URL + "/debug/pprof", CPU: time.Second, Contention: true}
	profs, warns := Capture(context.Background(), req, srv.Client())
	close(stop)
	<-done
	if len(warns) > 0 {
		t.Fatalf("Capture warnings: %q", warns)
	}
	if profs.Block == nil || profs.Mutex == nil {
		t.Fatalf("Capture(%s) got block %v and mutex %v profiles, want both", req, profs.Block != nil, profs.Mutex != nil)
	}
	if d := profs.Block.Parsed.DurationNanos; d < int64(900*time.Millisecond) {
		t.Errorf("block profile spans %v, want a delta over about 1s", time.Duration(d))
	}
	a, _ := Analyze(profs, 0)
	if a.Block == nil || len(a.Block.Sites) == 0 || !strings.HasSuffix(a.Block.Sites[0].Caller, "apiperfTestContend") {
		t.Fatalf("Analyze block = %+v, want its top site from apiperfTestContend", a.Block)
	}
	if a.Block.Seconds < 0.9 {
		t.Errorf("Analyze block covers %.2fs, want about 1", a.Block.Seconds)
	}
}

// TestCaptureContentionAbsent: block and mutex profiles that are not served (404) or have
// no samples (not enabled) are left out without a warning; other failures are reported.
func TestCaptureContentionAbsent(t *testing.T) {
	tests := []struct {
		name  string
		modes map[string]string
		want  string // the warning; "" for none
		ok    []Kind
	}{
		// Not served: silence.
		{"404", map[string]string{"block": "404", "mutex": "404"}, "", []Kind{KindCPU, KindHeap, KindGoroutine}},
		// Served but empty (the target did not enable them): silence.
		{"empty", map[string]string{"block": "empty", "mutex": "empty"}, "", []Kind{KindCPU, KindHeap, KindGoroutine}},
		// Served: kept.
		{"served", nil, "", []Kind{KindCPU, KindHeap, KindGoroutine, KindBlock, KindMutex}},
		// A real failure is a warning, counted among the profiles asked for.
		{"block 500", map[string]string{"block": "500", "mutex": "empty"}, "captured 3 of 4 profiles: block: 500",
			[]Kind{KindCPU, KindHeap, KindGoroutine}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := brokenTarget(t, tt.modes)
			req := Request{Base: srv.URL + "/debug/pprof/", CPU: time.Second, Heap: true, Goroutines: true, Contention: true}
			profs, warns := Capture(context.Background(), req, srv.Client())
			switch {
			case tt.want == "" && len(warns) > 0:
				t.Errorf("Capture warnings = %q, want none", warns)
			case tt.want != "" && (len(warns) != 1 || !strings.Contains(warns[0], tt.want)):
				t.Errorf("Capture warnings = %q, want one with %q", warns, tt.want)
			}
			var got []Kind
			for _, p := range profs.All() {
				got = append(got, p.Kind)
			}
			if !slices.Equal(got, tt.ok) {
				t.Errorf("Capture captured %v, want %v", got, tt.ok)
			}
		})
	}
}
