package cli

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// proc is this test binary run as `apiperf args...` in its own process.
type proc struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
	done   chan struct{}
	code   int
}

func startApiperf(t *testing.T, args ...string) *proc {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: exec.Command(exe, args...), done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), asApiperfEnv+"=1", tokenEnv+"=proc-test-token-0123456789")
	p.cmd.Stdout, p.cmd.Stderr = io.Discard, &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := p.cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			p.code = ee.ExitCode()
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// wait waits up to d for the process and returns its exit code (-1: still running).
func (p *proc) wait(d time.Duration) int {
	select {
	case <-p.done:
		return p.code
	case <-time.After(d):
		return -1
	}
}

// clusterCommands is the argv of the coordinator and of a worker of a 3-worker sub (run,
// sweep, capacity) of url: the container commands of
// `apiperf k8s --workers 3 -- sub --join-timeout 30s args... url`, decoded strictly, with exe
// for /apiperf and addr for the join addresses (localCommands).
func clusterCommands(t *testing.T, exe, addr, sub, url string, args ...string) (coord, worker []string) {
	t.Helper()
	return clusterCommandsWith(t, []string{"--fetch-timeout", "0"}, exe, addr, sub, url, args...)
}

// clusterCommandsWith is clusterCommands with flags of apiperf k8s (clusterCommands: the
// coordinator does not serve its results, so it ends with its run). The coordinator never
// listens for metrics (--metrics-port 0: the manifests' 0.0.0.0 is not for tests).
func clusterCommandsWith(t *testing.T, k8sFlags []string, exe, addr, sub, url string, args ...string) (coord, worker []string) {
	t.Helper()
	args = append(append(append([]string{"--workers", "3", "--metrics-port", "0"}, k8sFlags...), "--", sub, "--join-timeout", "30s"), args...)
	_, o := k8sManifests(t, append(args, url)...)
	return localCommands(t, o, exe, addr)
}

// clusterProcs starts a counting server, a coordinator and three workers as processes.
func clusterProcs(t *testing.T, runArgs ...string) (coord *proc, workers []*proc, served *atomic.Int64) {
	served = new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	coordArgv, workerArgv := clusterCommands(t, exe, freeAddr(t), "run", srv.URL, runArgs...)
	coord = startApiperf(t, coordArgv[1:]...)
	for range 3 {
		workers = append(workers, startApiperf(t, workerArgv[1:]...))
	}
	deadline := time.Now().Add(20 * time.Second)
	for served.Load() < 100 {
		if time.Now().After(deadline) {
			t.Fatalf("no load after 20s; coordinator stderr:\n%s", coord.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return coord, workers, served
}

// TestClusterWorkerKilled kills a worker process mid-run: the coordinator names it, keeps
// the data, and exits 1 (partial).
func TestClusterWorkerKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("processes")
	}
	coord, workers, _ := clusterProcs(t, "-R", "300", "-c", "3", "-d", "6s")
	time.Sleep(1500 * time.Millisecond)
	workers[1].cmd.Process.Kill()
	code := coord.wait(30 * time.Second)
	out := coord.stderr.String()
	if code != 1 || !strings.Contains(out, "partial run") || !strings.Contains(out, "lost") || !strings.Contains(out, "responses") {
		t.Errorf("coordinator exited %d after a worker was killed, want 1 naming the lost worker; stderr:\n%s", code, out)
	}
	t.Logf("coordinator stderr:\n%s", out)
}

// TestClusterCoordinatorKilled kills the coordinator process mid-run: every worker stops
// loading and exits within 5s.
func TestClusterCoordinatorKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("processes")
	}
	coord, workers, served := clusterProcs(t, "-R", "300", "-c", "3", "-d", "60s")
	coord.cmd.Process.Kill()
	killed := time.Now()
	for k, w := range workers {
		if code := w.wait(5*time.Second - time.Since(killed)); code != 1 {
			t.Errorf("worker %d: exit %d within 5s of the coordinator's death, want 1; stderr:\n%s", k+1, code, w.stderr.String())
		}
	}
	t.Logf("every worker exited %v after the coordinator was killed", time.Since(killed).Round(time.Millisecond))
	at := served.Load()
	time.Sleep(300 * time.Millisecond)
	if after := served.Load(); after != at {
		t.Errorf("%d more requests arrived after the workers exited", after-at)
	}
}

// TestClusterInterruptSaves interrupts a scaled-out run (Ctrl-C to the coordinator): it
// stops the workers, saves what they measured and exits, well before the run's 60s.
func TestClusterInterruptSaves(t *testing.T) {
	if testing.Short() {
		t.Skip("processes")
	}
	out := t.TempDir() + "/run.json"
	coord, _, _ := clusterProcs(t, "-R", "300", "-c", "3", "-d", "60s", "-o", out)
	coord.cmd.Process.Signal(os.Interrupt)
	stopped := time.Now()
	code := coord.wait(15 * time.Second)
	if code == -1 {
		t.Fatalf("the coordinator still runs 15s after Ctrl-C; stderr:\n%s", coord.stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil || !bytes.Contains(b, []byte(`"interrupted": true`)) || !bytes.Contains(b, []byte(`"requests"`)) {
		t.Errorf("after Ctrl-C (exit %d) run.json = %.300s, %v; want the interrupted step saved; stderr:\n%s", code, b, err, coord.stderr.String())
	}
	t.Logf("exit %d %v after Ctrl-C", code, time.Since(stopped).Round(time.Millisecond))
}
