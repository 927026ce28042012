package cli

import (
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apiperf/apiperf/internal/testenv"
	"github.com/apiperf/apiperf/profcap"
	"github.com/apiperf/apiperf/result"
	"github.com/apiperf/apiperf/scenario"
)

// TestHelperServeInherited is not a test: run by the tests below as a child, it serves HTTP
// on the listener it inherited until killed.
func TestHelperServeInherited(t *testing.T) {
	http.Serve(testenv.ChildListener(t), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
}

// serveInOtherProcess serves HTTP on a loopback port from a child process (killed at the
// test's end) and returns its address and the child.
func serveInOtherProcess(t *testing.T) (string, *exec.Cmd) {
	return testenv.ServeInChild(t, "TestHelperServeInherited")
}

// A capacity search finds the target's process as a sweep does, and measures its CPU per
// probe; it does not warn that "the peak is at the largest level run", which means nothing
// of rates a search chose.
func TestCapacityFindsTargetPID(t *testing.T) {
	addr, child := serveInOtherProcess(t)
	dir := t.TempDir()
	code, stdout, stderr := runCLI(t, "capacity", "--start", "50", "--max-rate", "100", "-d", "500ms", "--warmup", "0s", "--no-history",
		"--dir", dir, "--name", "found", "http://"+addr+"/")
	if code != ExitOK {
		t.Fatalf("apiperf capacity = %d\n%s\n%s", code, stdout, stderr)
	}
	want := "target process " + strconv.Itoa(child.Process.Pid) + " (listening on " + addr + ")"
	if !strings.Contains(stderr, want) || strings.Contains(stderr, "largest level run") {
		t.Errorf("stderr does not say %q, or warns of the largest level run:\n%s", want, stderr)
	}
	r, err := result.Load(filepath.Join(dir, "found"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Target == nil || r.Target.PIDSource != "listening on "+addr || len(r.Target.Steps) != len(r.Steps) || len(r.Steps) < 2 {
		t.Fatalf("run.json target = %+v for %d probes; want every probe's capture, found listening on %s", r.Target, len(r.Steps), addr)
	}
	for _, w := range r.Warnings {
		if strings.Contains(w, "largest level run") {
			t.Errorf("run.json warns %q", w)
		}
	}
	in, _ := r.VerdictInput()
	if l := in.Levels[len(in.Levels)-1]; l.Target == nil {
		t.Errorf("verdict input's last level has no target usage: the verdict would say target CPU not measured")
	}
}

// A sweep of a loopback target served by another process finds that process by its
// listening socket, without --target-pid: run.json says how, and has the target's CPU and
// the machine's per level.
func TestSweepFindsTargetPID(t *testing.T) {
	addr, child := serveInOtherProcess(t)
	dir := t.TempDir()
	code, stdout, stderr := runCLI(t, "sweep", "--levels", "1", "-d", "1s", "--warmup", "0s", "--no-history",
		"--dir", dir, "--name", "found", "http://"+addr+"/")
	if code != ExitOK {
		t.Fatalf("apiperf sweep = %d\n%s\n%s", code, stdout, stderr)
	}
	want := "target process " + strconv.Itoa(child.Process.Pid) + " (listening on " + addr + ")"
	if !strings.Contains(stderr, want) {
		t.Errorf("stderr does not say %q:\n%s", want, stderr)
	}
	r, err := result.Load(filepath.Join(dir, "found"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Target == nil || r.Target.PIDSource != "listening on "+addr || len(r.Target.Steps) != 1 {
		t.Fatalf("run.json target = %+v, want one step found listening on %s", r.Target, addr)
	}
	s := r.Target.Steps[0]
	if s.Process == nil || s.Process.URL != "/proc/"+strconv.Itoa(child.Process.Pid) || s.Machine == nil || s.Machine.CPUs < 1 || s.Machine.Busy <= 0 {
		t.Errorf("step capture: process %+v, machine %+v; want the child's /proc and the machine's CPU", s.Process, s.Machine)
	}
	in, _ := r.VerdictInput()
	if l := in.Levels[0]; l.Machine == nil || l.Target == nil {
		t.Errorf("verdict input level: machine %+v, target %+v; want both", l.Machine, l.Target)
	}
}

// Targets whose process is not sought or not found: the note says why, for the record.
func TestSessionTargetPID(t *testing.T) {
	var tf targetFlags
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	session := func(rawURL string, find bool) (*profcap.Session, string) {
		tgt, err := scenario.ParseTarget(rawURL)
		if err != nil {
			t.Fatal(err)
		}
		return tf.session(findProcess(&tf, tgt), find)
	}
	// In apiperf's own process (as in tests): nothing to separate, nothing said.
	if s, note := session("http://"+addr+"/", true); s.PID != 0 || note != "" {
		t.Errorf("in-process target: pid %d, note %q; want none", s.PID, note)
	}
	ln.Close()
	s, note := session("http://"+addr+"/", true)
	if s.PID != 0 || !strings.Contains(note, "no socket listens there") || !strings.Contains(s.PIDSource, "not found") {
		t.Errorf("nothing listening: pid %d, note %q, source %q", s.PID, note, s.PIDSource)
	}
	s, note = session("http://example.com/", true)
	if s.PID != 0 || note != "" || !strings.Contains(s.PIDSource, "not looked for") {
		t.Errorf("remote host: pid %d, note %q, source %q; want not looked for, quietly", s.PID, note, s.PIDSource)
	}
	if s, _ := session("http://"+addr+"/", false); s.PID != 0 || s.PIDSource != "" {
		t.Errorf("not asked to find it (run, --workers): pid %d, source %q; want not looked for", s.PID, s.PIDSource)
	}
}
