package target

import (
	"io"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func demoGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %s", url, resp.Status, b)
	}
	return string(b)
}

func TestDemoBottlenecks(t *testing.T) {
	srv, err := Start(Config{Demo: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for _, path := range []string{"/demo/cpu", "/demo/pool", "/demo/downstream", "/demo/leak"} {
		if body := demoGet(t, srv.URL()+path); !strings.HasPrefix(body, `{"result":`) {
			t.Errorf("GET %s = %q, want a result", path, body)
		}
	}

	// 4 x PoolSize requests at once through a pool of PoolSize slots held PoolHold each
	// take at least 4 rounds; the same through the downstream's DownstreamConns likewise.
	for _, c := range []struct {
		path string
		hold time.Duration
	}{{"/demo/pool", 4 * PoolHold}, {"/demo/downstream", 4 * DownstreamDelay}} {
		start := time.Now()
		var wg sync.WaitGroup
		for range 4 * PoolSize {
			wg.Add(1)
			go func() {
				defer wg.Done()
				demoGet(t, srv.URL()+c.path)
			}()
		}
		wg.Wait()
		if el := time.Since(start); el < c.hold {
			t.Errorf("%d concurrent GET %s took %v, want at least %v (the limit of %d)", 4*PoolSize, c.path, el, c.hold, PoolSize)
		}
	}
}

func TestDemoLeakEndsOnClose(t *testing.T) {
	srv, err := Start(Config{Demo: true})
	if err != nil {
		t.Fatal(err)
	}
	for range 50 {
		demoGet(t, srv.URL()+"/demo/leak")
	}
	// Counted by name, so goroutines of other tests and of HTTP connections do not matter.
	// A goroutine just started by the handler may not be in the dump yet on a busy machine
	// (seen once: 49 of 50), so it is given a moment; more than 50 is never waited away.
	until := time.Now().Add(2 * time.Second)
	for leakedWatchers() < 50 && time.Now().Before(until) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := leakedWatchers(); n != 50 {
		t.Errorf("after 50 GET /demo/leak: %d leaked goroutines, want 50", n)
	}
	srv.Close()
	deadline := time.Now().Add(2 * time.Second)
	for leakedWatchers() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := leakedWatchers(); n != 0 {
		t.Errorf("after Close: %d leaked goroutines, want 0: they must end with the server", n)
	}
}

// leakedWatchers counts the goroutines parked in apiperfLeakedWatcher, from every stack.
func leakedWatchers() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), "apiperfLeakedWatcher(")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// DemoPaths, which serve --help lists, are the endpoints a demo server answers: /demo/timing
// among them.
func TestDemoPathsAnswer(t *testing.T) {
	srv, err := Start(Config{Demo: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	paths := DemoPaths()
	if !slices.Contains(paths, "/demo/timing") || len(paths) != 5 {
		t.Errorf("DemoPaths() = %v; want the five bottlenecks, /demo/timing among them", paths)
	}
	for _, p := range paths {
		demoGet(t, srv.URL()+p) // fails the test on anything but 200
	}
}
