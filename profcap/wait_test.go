package profcap

import (
	"bytes"
	"runtime"
	"runtime/pprof"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

//go:noinline
func apiperfTestWaitMutex(mu *sync.Mutex, wg *sync.WaitGroup) {
	wg.Done()
	mu.Lock()
	mu.Unlock()
}

//go:noinline
func apiperfTestWaitChan(ch chan struct{}, wg *sync.WaitGroup) {
	wg.Done()
	<-ch
}

func TestWaitSites(t *testing.T) {
	var mu sync.Mutex
	mu.Lock()
	ch := make(chan struct{})
	var started, done sync.WaitGroup
	for i := range 30 {
		started.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			if i < 20 {
				apiperfTestWaitMutex(&mu, &started)
			} else {
				apiperfTestWaitChan(ch, &started)
			}
		}()
	}
	started.Wait()
	time.Sleep(20 * time.Millisecond) // let them park
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 0); err != nil {
		t.Fatal(err)
	}
	mu.Unlock()
	close(ch)
	done.Wait()
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	w := WaitSites(p, 5)
	if w.Total < 30 {
		t.Fatalf("WaitSites: total %d, want at least 30", w.Total)
	}
	want := map[string]struct {
		count  int64
		reason string
	}{
		"sync.Mutex: waiting for the lock from github.com/apiperf/apiperf/profcap.apiperfTestWaitMutex": {20, "mutex"},
		"a channel receive in github.com/apiperf/apiperf/profcap.apiperfTestWaitChan":                   {10, "channel receive"},
	}
	found := 0
	for _, s := range w.Sites {
		if wnt, ok := want[s.Site()]; ok {
			found++
			if s.Count != wnt.count || s.Reason != wnt.reason {
				t.Errorf("site %s: count %d reason %q, want %d %q", s.Site(), s.Count, s.Reason, wnt.count, wnt.reason)
			}
		}
	}
	if found != len(want) {
		t.Errorf("WaitSites = %+v, want sites %v", w.Sites, want)
	}
	runtime.KeepAlive(&mu)
}

func TestIsStd(t *testing.T) {
	for fn, want := range map[string]bool{
		"sync.(*Mutex).Lock":             true,
		"database/sql.(*DB).conn":        true,
		"main.handler":                   false,
		"github.com/x/y.(*T).Get":        false,
		"example.com/svc.handler":        false,
		"net/http.HandlerFunc.ServeHTTP": true,
	} {
		if got := isStd(fn); got != want {
			t.Errorf("isStd(%q) = %v, want %v", fn, got, want)
		}
	}
}
