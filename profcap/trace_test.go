package profcap

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
)

// TestRequestWithinTrace: the trace follows the CPU profile, never overlapping it (the
// tracer's work would show in the CPU profile), and both end inside the window.
func TestRequestWithinTrace(t *testing.T) {
	const s = time.Second
	ms := time.Millisecond
	tests := []struct {
		name               string
		trace, window      time.Duration
		wantCPU, wantTrace time.Duration
		wantTraceAfter     time.Duration
		wantNote           string
	}{
		// 10 s: 1 s settle, 8.9 s of room: CPU 7 s, the trace from 8 s to 9 s.
		{"room for both", s, 10 * s, 7 * s, s, 8 * s, ""},
		// 3 s: settle 600 ms, room 2.3 s: CPU 1 s, the trace from 1.6 s.
		{"demo window", s, 3 * s, s, s, 1600 * ms, ""},
		// 2 s: settle 400 ms, room 1.5 s: CPU 1 s first, the trace gets the 500 ms left.
		{"shortened", s, 2 * s, s, 500 * ms, 1400 * ms, "shortened to 500ms"},
		// 1.5 s: CPU 1 s from 300 ms, 100 ms left: no trace.
		{"no room", s, 1500 * ms, s, 0, 1300 * ms, "no 250ms trace fits"},
		// a 300 ms trace asked: CPU keeps 7 whole seconds after it, trace from 8 s.
		{"fractional", 300 * ms, 10 * s, 8 * s, 300 * ms, 9 * s, ""},
		// no trace asked: CPU as before.
		{"none", 0, 10 * s, 8 * s, 0, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, note := Request{Base: "http://127.0.0.1:1/debug/pprof", CPU: time.Hour, Trace: tt.trace}.Within(tt.window)
			if r.CPU != tt.wantCPU || r.Trace != tt.wantTrace || r.Trace > 0 && r.TraceAfter != tt.wantTraceAfter {
				t.Errorf("Within(%v) = cpu %v, trace %v after %v; want cpu %v, trace %v after %v",
					tt.window, r.CPU, r.Trace, r.TraceAfter, tt.wantCPU, tt.wantTrace, tt.wantTraceAfter)
			}
			if (tt.wantNote == "") != (note == "") || !strings.Contains(note, tt.wantNote) {
				t.Errorf("Within(%v) note = %q, want one containing %q", tt.window, note, tt.wantNote)
			}
			if r.Trace > 0 && (r.TraceAfter < r.CPUAfter+r.CPU || r.TraceAfter+r.Trace > tt.window-CPUMargin) {
				t.Errorf("trace %v after %v overlaps the CPU profile (%v after %v) or ends past the window", r.Trace, r.TraceAfter, r.CPU, r.CPUAfter)
			}
		})
	}
}

// TestSessionKeepsTrace: a session against a real net/http/pprof keeps the trace of the
// chosen level as profiles/<level>/trace.out with its summary, drops the other's temporary
// file, and a target without /trace gives one warning.
func TestSessionKeepsTrace(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	dir := t.TempDir()
	t.Setenv("TMPDIR", t.TempDir()) // its own: other tests and apiperf runs write traces in /tmp at the same time
	tmpBefore, _ := filepath.Glob(filepath.Join(os.TempDir(), "apiperf-trace-*.out"))
	s := &Session{Pprof: srv.URL + "/debug/pprof", Trace: 300 * time.Millisecond, Levels: []string{"c=2"}}
	var steps []*measure.Step
	for _, label := range []string{"c=1", "c=2"} {
		c := s.Begin(context.Background(), label, 0, 2*time.Second)
		time.Sleep(2 * time.Second)
		c.Wait()
		steps = append(steps, &measure.Step{Label: label})
	}
	rec := s.Finish(steps, dir)
	traced := rec.Traced()
	if len(traced) != 1 || traced[0].Label != "c=2" {
		t.Fatalf("traced steps %v; want c=2 only (warnings %q)", traced, rec.AllWarnings())
	}
	tr := traced[0].Trace
	if tr.Summary == nil || tr.Summary.Span <= 0 || tr.Length != 300*time.Millisecond || tr.From < time.Second {
		t.Errorf("trace record %+v; want a summary of a 300ms trace after the 1s CPU profile", tr)
	}
	if fi, err := os.Stat(filepath.Join(dir, "profiles", "c=2", "trace.out")); err != nil || fi.Size() != tr.Bytes {
		t.Errorf("saved trace: %v, %v; want %d bytes", fi, err, tr.Bytes)
	}
	tmpAfter, _ := filepath.Glob(filepath.Join(os.TempDir(), "apiperf-trace-*.out"))
	if len(tmpAfter) > len(tmpBefore) {
		t.Errorf("temporary traces left behind: %v (before: %v)", tmpAfter, tmpBefore)
	}

	// A target that serves profiles but no trace: one warning naming it.
	mux2 := http.NewServeMux()
	mux2.HandleFunc("/debug/pprof/profile", pprof.Profile)
	srv2 := httptest.NewServer(mux2)
	defer srv2.Close()
	s2 := &Session{Pprof: srv2.URL + "/debug/pprof", Trace: 300 * time.Millisecond}
	c := s2.Begin(context.Background(), "c=1", 0, 2*time.Second)
	c.Wait()
	rec2 := s2.Finish([]*measure.Step{{Label: "c=1"}}, t.TempDir())
	var traceWarns []string
	for _, w := range rec2.AllWarnings() {
		if strings.Contains(w, "trace:") {
			traceWarns = append(traceWarns, w)
		}
	}
	if len(traceWarns) != 1 || !strings.Contains(traceWarns[0], "trace: 404") {
		t.Errorf("warnings %q; want one naming the trace's 404", rec2.AllWarnings())
	}
}
