package cli

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/conditions"
	"github.com/apiperf/apiperf/internal/testenv"
	"github.com/apiperf/apiperf/result"
)

// helloServer is a small Go HTTP service that prints its address and serves "ok".
var helloServer = map[string]string{
	"go.mod": "module example.com/hello\n\ngo 1.22\n",
	"main.go": `package main

import (
	"fmt"
	"net"
	"net/http"
	"time"
)

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	fmt.Println(ln.Addr())
	go func() { time.Sleep(2 * time.Minute); ln.Close() }()
	http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
}
`,
}

// startHello builds and starts helloServer; it returns its URL, PID and revision.
func startHello(t *testing.T) (url string, pid int, rev string) {
	t.Helper()
	exe, rev := testenv.GoProgram(t, helloServer, nil)
	cmd := exec.Command(exe)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the server's address: %v", err)
	}
	return "http://" + strings.TrimSpace(addr) + "/", cmd.Process.Pid, rev
}

// loadConditions runs apiperf run with args and returns its run.json's conditions and stdout.
func loadConditions(t *testing.T, args ...string) (*conditions.Record, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "run.json")
	code, stdout, stderr := runCLI(t, append([]string{"run", "-d", "2s", "-c", "2", "-t", "1", "--no-history", "-o", out}, args...)...)
	if code != ExitOK {
		t.Fatalf("apiperf run %v = %d\n%s\n%s", args, code, stdout, stderr)
	}
	r, err := result.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Conditions == nil {
		t.Fatalf("apiperf run %v: run.json has no conditions", args)
	}
	return r.Conditions, stdout
}

// Issue 29's check of a run: run.json records the generator's CPU model, logical CPUs and
// kernel (as /proc/cpuinfo and uname say), and the target's Go version and revision, read
// from the executable of the process found listening on the URL's port, or given by
// --target-pid. Another process spinning during the run is recorded as other CPU (at
// least what its schedstat says it used) and named in the text output.
func TestRunRecordsConditions(t *testing.T) {
	url, pid, rev := startHello(t)
	child := testenv.BusyChild(t)
	c0, t0 := testenv.ThreadCPU(t, child), time.Now()
	rec, stdout := loadConditions(t, url)
	childCores := (testenv.ThreadCPU(t, child) - c0).Seconds() / time.Since(t0).Seconds()

	g := rec.Generator
	info, _ := os.ReadFile("/proc/cpuinfo")
	uname, _ := exec.Command("uname", "-r").Output()
	if g.CPUModel == "" || !strings.Contains(string(info), g.CPUModel) || g.CPUs < 1 || g.Kernel != strings.TrimSpace(string(uname)) {
		t.Errorf("generator = %+v: want the CPU model of /proc/cpuinfo, its CPUs, kernel %q", g, strings.TrimSpace(string(uname)))
	}
	if g.GOMAXPROCS != 1 || g.Threads != 1 {
		t.Errorf("generator GOMAXPROCS %d, threads %d; want 1 and 1 (-t 1)", g.GOMAXPROCS, g.Threads)
	}
	tg := rec.Target
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/")
	if tg == nil || tg.PID != pid || tg.Found != "listening on "+addr || tg.Build == nil {
		t.Fatalf("target = %+v, want PID %d found listening on %s, with a build", tg, pid, addr)
	}
	if tg.Build.GoVersion != testenv.GoVersion(t) || tg.Build.Revision != rev || tg.Build.Module != "example.com/hello" {
		t.Errorf("target build = %+v, want %s, revision %s, module example.com/hello", tg.Build, testenv.GoVersion(t), rev)
	}
	if len(rec.Steps) != 1 {
		t.Fatalf("conditions of %d steps, want 1", len(rec.Steps))
	}
	s := rec.Steps[0]
	t.Logf("step: busy %.2f, apiperf %.2f, target %v, others %.2f (max %.2f); the spinning child used %.2f cores", s.Busy, s.Apiperf, deref(s.Target), s.Others, s.OthersMax, childCores)
	if s.Target == nil || s.Others < childCores-0.1 {
		t.Errorf("others' CPU %.2f cores with a child spinning at %.2f beside the run; want at least the child's", s.Others, childCores)
	}
	if said := strings.Contains(stdout, "  Conditions: other processes took "); said != (s.Others > conditions.DefaultThresholds.OthersCores) {
		t.Errorf("others took %.2f cores; text output says so: %v, want it exactly above %.2f:\n%s", s.Others, said, conditions.DefaultThresholds.OthersCores, stdout)
	}

	// With --target-pid naming the spinning child, its CPU is the target's, not the
	// others': a machine with it alone busy would record none.
	c0, t0 = testenv.ThreadCPU(t, child), time.Now()
	rec2, _ := loadConditions(t, "--target-pid", strconv.Itoa(child), url)
	childCores = (testenv.ThreadCPU(t, child) - c0).Seconds() / time.Since(t0).Seconds()
	s2 := rec2.Steps[0]
	t.Logf("--target-pid child: busy %.2f, apiperf %.2f, target %v, others %.2f; the child used %.2f cores", s2.Busy, s2.Apiperf, deref(s2.Target), s2.Others, childCores)
	if rec2.Target == nil || rec2.Target.Found != "--target-pid" || s2.Target == nil || *s2.Target < childCores-0.1 {
		t.Fatalf("--target-pid %d: target %+v, step target CPU %v; want the child's %.2f cores", child, rec2.Target, deref(s2.Target), childCores)
	}
	if s2.Others > s2.Busy-*s2.Target-s2.Apiperf+0.01 {
		t.Errorf("others %.2f are more than the machine's %.2f less apiperf's %.2f and the child's %.2f", s2.Others, s2.Busy, s2.Apiperf, *s2.Target)
	}
}

func deref(p *float64) any {
	if p == nil {
		return "unknown"
	}
	return *p
}
