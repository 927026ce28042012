package profcap

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// profcapHotSpinForTest burns CPU until stop closes; its unique name is what
// the CPU profile must find.
//
//go:noinline
func profcapHotSpinForTest(stop <-chan struct{}) uint64 {
	x := uint64(1)
	for {
		for range 100_000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
		select {
		case <-stop:
			return x
		default:
		}
	}
}

var profcapAllocSink [][]byte

// profcapAllocHeavyForTest retains 16 MiB in 64 KiB blocks, so the heap
// profile must list it as an allocation site.
//
//go:noinline
func profcapAllocHeavyForTest() {
	for range 256 {
		profcapAllocSink = append(profcapAllocSink, make([]byte, 64<<10))
	}
}

func pprofServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestCaptureRealTarget(t *testing.T) {
	srv := pprofServer(t)

	profcapAllocHeavyForTest()
	t.Cleanup(func() { profcapAllocSink = nil })
	runtime.GC() // the heap profile shows the state at the last completed GC

	park := make(chan struct{})
	for range 50 {
		go func() { <-park }()
	}
	defer close(park)

	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); profcapHotSpinForTest(stop) }()
	safety := time.AfterFunc(10*time.Second, func() { close(stop) }) // bounded even if the test hangs
	defer func() {
		if safety.Stop() {
			close(stop)
		}
		<-done
	}()

	req := Request{Base: srv.URL + "/debug/pprof", CPU: time.Second, Heap: true, Goroutines: true}
	start := time.Now()
	profs, warns := Capture(context.Background(), req, srv.Client())
	took := time.Since(start)
	if len(warns) > 0 {
		t.Fatalf("Capture(%v) warnings: %q, want none", req, warns)
	}
	if took < 900*time.Millisecond || took > 8*time.Second {
		t.Errorf("Capture with CPU 1s took %v, want about 1s", took)
	}
	if profs.CPU == nil || profs.Heap == nil || profs.Goroutine == nil {
		t.Fatalf("Capture = %+v, want all three profiles", profs)
	}

	a, warns := Analyze(profs, 20)
	if len(warns) > 0 {
		t.Errorf("Analyze warnings: %q", warns)
	}
	t.Logf("CPU %s", a.CPU)
	const hot = "github.com/apiperf/apiperf/profcap.profcapHotSpinForTest"
	if e, ok := findEntry(a.CPU.ByCum, hot); !ok || e.CumPct < 10 {
		t.Errorf("top -cum lacks %s with >= 10%% (got %+v, found %v):\n%s", hot, e, ok, a.CPU)
	}
	if e, ok := findEntry(a.CPU.ByFlat, hot); !ok || e.Flat == 0 {
		t.Errorf("top (flat) lacks %s (got %+v, found %v)", hot, e, ok)
	}
	const alloc = "github.com/apiperf/apiperf/profcap.profcapAllocHeavyForTest"
	for _, tab := range []*TopTable{a.AllocSpace, a.InuseSpace} {
		if e, ok := findEntry(tab.ByFlat, alloc); !ok || e.Flat < 4<<20 {
			t.Errorf("%s sites lack %s with >= 4 MiB (got %+v, found %v):\n%s", tab.SampleType, alloc, e, ok, tab)
		}
	}
	if a.Goroutines == nil || *a.Goroutines < 50 {
		t.Errorf("Analyze goroutines = %v, want >= 50 (the parked ones)", a.Goroutines)
	}
	if a.Shares == nil || a.Shares.GCPct < 0 || a.Shares.GCPct > 100 || a.Shares.AllocPct < 0 || a.Shares.AllocPct > 100 {
		t.Errorf("Analyze shares = %+v, want percentages in [0, 100]", a.Shares)
	}
	if a.Flame == nil || a.Flame.Root.Value != a.CPU.Total || !treeHas(a.Flame.Root, hot) {
		t.Errorf("flame graph root %v (CPU total %d) lacks %s", a.Flame, a.CPU.Total, hot)
	}

	dir := t.TempDir()
	if err := profs.Save(dir); err != nil {
		t.Fatalf("Save: %v", err)
	}
	for _, k := range []Kind{KindCPU, KindHeap, KindGoroutine} {
		b, err := os.ReadFile(filepath.Join(dir, k.FileName()))
		if err != nil || !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
			t.Errorf("saved %s: %d bytes, err %v; want a gzip file", k.FileName(), len(b), err)
		}
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not on PATH; not checking that go tool pprof opens the files")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, goTool, "tool", "pprof", "-top", "-symbolize=none",
		filepath.Join(dir, KindCPU.FileName())).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "profcapHotSpinForTest") {
		t.Errorf("go tool pprof -top cpu.pb.gz: err %v, output lacks the hot function:\n%s", err, out)
	}
	// pprof's own flat% for the hot function must match ours.
	e, _ := findEntry(a.CPU.ByFlat, hot)
	if want := pprofPercent(e.FlatPct); !strings.Contains(string(out), want) {
		t.Errorf("go tool pprof -top output lacks our flat share %s for the hot function:\n%s", want, out)
	}
}

// pprofPercent formats a share the way go tool pprof's -top does: "100%" and "0%" whole.
func pprofPercent(v float64) string {
	switch {
	case v == 0:
		return "0%"
	case math.Abs(v) >= 99.95 && math.Abs(v) <= 100.05:
		return "100%"
	}
	return fmt.Sprintf("%.2f%%", v)
}

func findEntry(entries []TopEntry, name string) (TopEntry, bool) {
	i := slices.IndexFunc(entries, func(e TopEntry) bool { return e.Function == name })
	if i < 0 {
		return TopEntry{}, false
	}
	return entries[i], true
}

func treeHas(f *Frame, name string) bool {
	return f.Name == name || slices.ContainsFunc(f.Children, func(c *Frame) bool { return treeHas(c, name) })
}

// brokenTarget serves a valid synthetic profile at every pprof path except
// the ones given a failure mode.
func brokenTarget(t *testing.T, modes map[string]string) *httptest.Server {
	t.Helper()
	var good bytes.Buffer
	if err := fakeProfile(stk{[]string{"main.work", "main.main"}, 10}).Write(&good); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/debug/pprof/")
		if (name == "profile" || name == "block" || name == "mutex") && r.URL.Query().Get("seconds") != "1" {
			http.Error(w, "want seconds=1, got "+r.URL.RawQuery, http.StatusBadRequest)
			return
		}
		switch modes[name] {
		case "404":
			http.NotFound(w, r)
		case "500":
			http.Error(w, "Could not enable CPU profiling: cpu profiling already in use", http.StatusInternalServerError)
		case "slow":
			select {
			case <-r.Context().Done():
			case <-time.After(30 * time.Second): // far beyond every bound below: a wait for it shows
			}
			w.Write(good.Bytes())
		case "html":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<!DOCTYPE html>\n<html><body>login</body></html>"))
		case "truncated":
			w.Write(good.Bytes()[:good.Len()/2])
		case "empty":
			fakeProfile().Write(w)
		default:
			w.Write(good.Bytes())
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestCaptureFailures(t *testing.T) {
	tests := []struct {
		name  string
		modes map[string]string
		want  []string // substrings of the single warning
		ok    []Kind   // profiles still captured
	}{
		{
			// a missing endpoint names its status; the other two are kept.
			name:  "heap 404",
			modes: map[string]string{"heap": "404"},
			want:  []string{"captured 2 of 3 profiles", "heap: 404 Not Found"},
			ok:    []Kind{KindCPU, KindGoroutine},
		},
		{
			// an endpoint slower than its deadline is abandoned at the deadline.
			name:  "goroutine beyond deadline",
			modes: map[string]string{"goroutine": "slow"},
			want:  []string{"captured 2 of 3 profiles", "goroutine: fetching: context deadline exceeded"},
			ok:    []Kind{KindCPU, KindHeap},
		},
		{
			// a login page or index page is not a profile.
			name:  "html body",
			modes: map[string]string{"heap": "html"},
			want:  []string{"captured 2 of 3 profiles", "heap: got an HTML page"},
			ok:    []Kind{KindCPU, KindGoroutine},
		},
		{
			// a cut-off gzip stream fails to parse.
			name:  "truncated gzip",
			modes: map[string]string{"profile": "truncated"},
			want:  []string{"captured 2 of 3 profiles", "cpu: parsing profile:"},
			ok:    []Kind{KindHeap, KindGoroutine},
		},
		{
			// the server's own explanation is carried into the warning.
			name:  "cpu busy",
			modes: map[string]string{"profile": "500"},
			want:  []string{"cpu: 500 Internal Server Error: Could not enable CPU profiling: cpu profiling already in use"},
			ok:    []Kind{KindHeap, KindGoroutine},
		},
		{
			// two failures are listed together in one warning.
			name:  "two failures",
			modes: map[string]string{"heap": "404", "goroutine": "html"},
			want:  []string{"captured 1 of 3 profiles: heap: 404 Not Found; goroutine: got an HTML page"},
			ok:    []Kind{KindCPU},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := brokenTarget(t, tt.modes)
			req := Request{Base: srv.URL + "/debug/pprof/", CPU: 1200 * time.Millisecond, Heap: true, Goroutines: true, Slack: 300 * time.Millisecond}
			start := time.Now()
			profs, warns := Capture(context.Background(), req, srv.Client())
			if took := time.Since(start); took > 8*time.Second {
				t.Errorf("Capture took %v, want it bounded by the 300ms slack (1.5s for CPU), not the slow endpoint's 30s", took)
			}
			if len(warns) != 1 {
				t.Fatalf("Capture warnings = %q, want exactly one", warns)
			}
			for _, w := range tt.want {
				if !strings.Contains(warns[0], w) {
					t.Errorf("Capture warning %q lacks %q", warns[0], w)
				}
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

func TestCaptureConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	req := Request{Base: "http://" + addr + "/debug/pprof", CPU: time.Second, Heap: true, Goroutines: true, Slack: time.Second}
	start := time.Now()
	profs, warns := Capture(context.Background(), req, nil)
	// Under the 2 s a capture that waited would take (1 s of CPU profile and 1 s of slack),
	// with room for a busy machine.
	if took := time.Since(start); took > 1900*time.Millisecond {
		t.Errorf("Capture against a closed port took %v, want it to fail fast", took)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "captured 0 of 3 profiles") || !strings.Contains(warns[0], "connection refused") {
		t.Errorf("Capture warnings = %q, want one saying 0 of 3 and connection refused", warns)
	}
	if len(profs.All()) != 0 {
		t.Errorf("Capture returned %d profiles, want none", len(profs.All()))
	}
	if err := profs.Save(t.TempDir()); err != nil {
		t.Errorf("Save with nothing captured: %v, want nil", err)
	}
}

func TestCaptureCallerCancels(t *testing.T) {
	srv := brokenTarget(t, map[string]string{"heap": "slow"})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	profs, warns := Capture(ctx, Request{Base: srv.URL + "/debug/pprof", Heap: true, Goroutines: true}, srv.Client())
	if took := time.Since(start); took > 8*time.Second {
		t.Errorf("Capture after the caller's deadline took %v, want it to stop at the 100ms deadline, not the slow endpoint's 30s", took)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "captured 1 of 2 profiles: heap:") {
		t.Errorf("Capture warnings = %q, want heap abandoned", warns)
	}
	if profs.Goroutine == nil {
		t.Errorf("Capture lost the goroutine profile that answered in time")
	}
}

func TestRequestValidate(t *testing.T) {
	tests := []struct {
		name string
		req  Request
		want []string // substrings of the error; none means valid
	}{
		// a plain full request is valid.
		{"valid", Request{Base: "http://127.0.0.1:6060/debug/pprof", CPU: 5 * time.Second, Heap: true}, nil},
		// the zero value names both missing things at once.
		{"zero", Request{}, []string{"base URL is empty", "no profile requested"}},
		// only http(s) URLs with a host.
		{"scheme", Request{Base: "ftp://h/x", Heap: true}, []string{"scheme must be http or https"}},
		{"no host", Request{Base: "http:///debug/pprof", Heap: true}, []string{"no host"}},
		// negative durations.
		{"negative", Request{Base: "http://h", CPU: -time.Second, Slack: -1}, []string{"CPU profile duration -1s is negative", "slack -1ns is negative"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.req.Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Errorf("Validate(%+v) = %v, want nil", tt.req, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate(%+v) = nil, want errors %q", tt.req, tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate(%+v) = %q, lacks %q", tt.req, err, w)
				}
			}
		})
	}
}

func TestRequestString(t *testing.T) {
	tests := []struct {
		req  Request
		want string
	}{
		// 1.4s rounds to the whole second the target is asked for.
		{Request{Base: "http://h/debug/pprof", CPU: 1400 * time.Millisecond, Heap: true, Goroutines: true}, "cpu 1s, heap, goroutine from http://h/debug/pprof"},
		// sub-second CPU still asks for 1s.
		{Request{Base: "http://h", CPU: 200 * time.Millisecond}, "cpu 1s from http://h"},
		// 2.5s rounds half away from zero.
		{Request{Base: "http://h", CPU: 2500 * time.Millisecond}, "cpu 3s from http://h"},
	}
	for _, tt := range tests {
		if got := tt.req.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.req, got, tt.want)
		}
	}
}
