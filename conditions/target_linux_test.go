package conditions

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/internal/testenv"
)

// sleeper is a small Go program that sleeps, in module example.com/sleeper.
var sleeper = map[string]string{
	"go.mod":  "module example.com/sleeper\n\ngo 1.22\n",
	"main.go": "package main\n\nimport \"time\"\n\nfunc main() { time.Sleep(time.Minute) }\n",
}

// start runs exe with extra environment and stops it when the test ends.
func start(t *testing.T, exe string, env ...string) int {
	t.Helper()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	// Wait until the process runs exe, not the forked test binary.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if p, _ := os.Readlink("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/exe"); p == exe {
			break
		}
	}
	return cmd.Process.Pid
}

// ReadTarget of a running Go program reads its build from /proc/PID/exe: the Go version
// that built it, its module, the revision git gave, whether the tree was modified, -race,
// and GOMAXPROCS from its environment.
func TestReadTargetGoBuild(t *testing.T) {
	exe, rev := testenv.GoProgram(t, sleeper, nil)
	pid := start(t, exe, "GOMAXPROCS=3")
	tg := ReadTarget(pid, "--target-pid")
	t.Logf("target: %s; notes %q", tg, tg.Notes)
	b := tg.Build
	if b == nil {
		t.Fatalf("ReadTarget(%d) of a Go program: no build (notes %q)", pid, tg.Notes)
	}
	if want := testenv.GoVersion(t); b.GoVersion != want {
		t.Errorf("GoVersion = %q, go env GOVERSION says %q", b.GoVersion, want)
	}
	if b.Module != "example.com/sleeper" || b.Revision != rev || b.Modified || b.Race {
		t.Errorf("build = %+v, want module example.com/sleeper, revision %s, not modified, no -race", b, rev)
	}
	if b.Settings["GOARCH"] == "" {
		t.Errorf("settings %v lack GOARCH", b.Settings)
	}
	if tg.Executable != exe || tg.PID != pid || tg.Found != "--target-pid" {
		t.Errorf("target = %+v, want executable %s, pid %d", tg, exe, pid)
	}
	if tg.GOMAXPROCS != 3 || tg.GOMAXPROCSFrom != "environment" {
		t.Errorf("GOMAXPROCS = %d from %q, want 3 from the environment", tg.GOMAXPROCS, tg.GOMAXPROCSFrom)
	}
	if !strings.Contains(tg.String(), ShortRev(rev)) {
		t.Errorf("String() = %q lacks the revision %s", tg.String(), ShortRev(rev))
	}
}

// A build of a modified tree with -race says so, is off, and differs from the clean build
// in what Compare lists.
func TestReadTargetRaceModified(t *testing.T) {
	exe, rev := testenv.GoProgram(t, sleeper, map[string]string{"main.go": strings.Replace(sleeper["main.go"], "time.Minute", "2*time.Minute", 1)}, "-race")
	tg := ReadTarget(start(t, exe), "")
	if tg.Build == nil || !tg.Build.Race || !tg.Build.Modified || tg.Build.Revision != rev {
		t.Fatalf("build = %+v, want -race, modified, revision %s", tg.Build, rev)
	}
	if tg.GOMAXPROCSFrom != "default" || tg.GOMAXPROCS < 1 {
		t.Errorf("GOMAXPROCS = %d from %q, want the default", tg.GOMAXPROCS, tg.GOMAXPROCSFrom)
	}
	r := &Record{Target: tg}
	if off := r.Off(DefaultThresholds); len(off) != 1 || !strings.Contains(off[0], "-race") {
		t.Errorf("Off = %q, want the -race build named", off)
	}
	clean := &Target{Build: &Build{GoVersion: tg.Build.GoVersion, Revision: "4d5e6f708192a3b4", Settings: tg.Build.Settings}, GOMAXPROCS: tg.GOMAXPROCS}
	c := Compare(&Record{Target: clean}, r, DefaultThresholds)
	got := joinDiffs(c.Build, "A", "B")
	for _, want := range []string{"revision (A: 4d5e6f708192, B: " + ShortRev(rev) + " (modified))", "-race (A: false, B: true)"} {
		if !strings.Contains(got, want) {
			t.Errorf("build differences %q lack %q", got, want)
		}
	}
}

// A process that is not a Go program has an executable and a note, no build.
func TestReadTargetNotGo(t *testing.T) {
	sh, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	cmd := exec.Command(sh, "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	time.Sleep(50 * time.Millisecond)
	tg := ReadTarget(cmd.Process.Pid, "--target-pid")
	if tg.Build != nil || tg.Executable == "" || len(tg.Notes) == 0 {
		t.Errorf("ReadTarget of sleep = %+v, want an executable, no build, a note", tg)
	}
}
