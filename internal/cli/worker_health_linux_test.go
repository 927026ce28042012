package cli

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apiperf/apiperf/report"
	"github.com/apiperf/apiperf/result"
)

// watched is this test binary run as `apiperf args...`, its outputs readable while it runs.
type watched struct {
	stdout, stderr lockedBuffer
	done           chan struct{}
	code           int
}

// startWatched starts `apiperf args...`; with files > 0, under `ulimit -n files` (soft and
// hard, so the Go runtime cannot raise it).
func startWatched(t *testing.T, files int, args ...string) *watched {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	if files > 0 {
		cmd = exec.Command("sh", append([]string{"-c", `ulimit -n "$0" && exec "$@"`, strconv.Itoa(files), exe}, args...)...)
	}
	w := &watched{done: make(chan struct{})}
	cmd.Env = append(os.Environ(), asApiperfEnv+"=1", tokenEnv+"=proc-test-token-0123456789")
	cmd.Stdout, cmd.Stderr = &w.stdout, &w.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			w.code = ee.ExitCode()
		}
		close(w.done)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-w.done
	})
	return w
}

// waitFor waits until w's stderr says s, w ends, or d passes; it says whether s was said.
func (w *watched) waitFor(s string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for !strings.Contains(w.stderr.String(), s) {
		select {
		case <-w.done:
			return strings.Contains(w.stderr.String(), s)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

// TestClusterWorkerStarved is issue 39's done-when on loopback with real processes: a
// scaled-out run and sweep (the commands of `apiperf k8s --workers 3 -- run|sweep`) whose
// worker 2 runs under `ulimit -n 24`, so it cannot open its 20 connections, give a run.json
// with every worker's conditions and limits, a workers table that marks worker 2
// generator-limited with its reason, and a verdict (sweep) or a warning beside the summary
// (run) that names worker 2; `apiperf report DIR` renders the same table from run.json alone.
func TestClusterWorkerStarved(t *testing.T) {
	if testing.Short() {
		t.Skip("processes")
	}
	for _, tc := range []struct {
		sub   string
		args  func(dir string) []string
		names string // in stdout: where worker 2 is named
	}{
		{"run", func(dir string) []string {
			// -n, not -d: on a machine this busy a worker may start a second late, and timed
			// windows that do not overlap are not merged (docs/SCALEOUT.md).
			return []string{"-c", "60", "-n", "6000", "-o", filepath.Join(dir, "run.json")}
		},
			") was generator-limited: open files of apiperf's process ran out at "},
		{"sweep", func(dir string) []string {
			return []string{"--levels", "60", "-n", "6000", "--warmup", "0", "--dir", filepath.Dir(dir), "--name", filepath.Base(dir)}
		}, "verdict: generator-limited (high): apiperf could not open the connections asked for at c=60 on worker 2 ("},
	} {
		t.Run(tc.sub, func(t *testing.T) {
			runDir := filepath.Join(t.TempDir(), "starved")
			os.MkdirAll(runDir, 0o755)
			stdout, stderr := starvedCluster(t, tc.sub, tc.args(runDir))
			if !strings.Contains(stdout, tc.names) || (tc.sub == "run" && !strings.Contains(stdout, "  Warning: worker 2 (")) {
				t.Errorf("stdout:\n%s\nwant %q naming worker 2; coordinator stderr:\n%s", stdout, tc.names, stderr)
			}
			r, err := result.Load(filepath.Join(runDir, "run.json"))
			if err != nil {
				t.Fatal(err)
			}
			checkStarvedRecord(t, r)
			table := workersBlock(stdout)
			rows := strings.Split(table, "\n")
			if len(rows) < 5 || !strings.HasSuffix(rows[3], "generator-limited") || strings.Contains(rows[2]+rows[4], "generator-limited") ||
				!strings.Contains(table, "  worker 2 at c=60: generator-limited: open files of apiperf's process ran out at ") {
				t.Errorf("workers table:\n%s\nwant worker 2's row marked generator-limited (only it), and its reason below", table)
			}
			// From run.json alone: the same table.
			os.Remove(filepath.Join(runDir, report.WorkersFile))
			if code, _, stderr := runCLI(t, "report", "-q", runDir); code != ExitOK {
				t.Fatalf("apiperf report = %d; stderr %s", code, stderr)
			}
			b, err := os.ReadFile(filepath.Join(runDir, report.WorkersFile))
			if err != nil || string(b) != table {
				t.Errorf("report's %s (%v):\n%s\nwant the table %s printed:\n%s", report.WorkersFile, err, b, tc.sub, table)
			}
			if h, err := os.ReadFile(filepath.Join(runDir, report.HTMLFile)); err != nil || !strings.Contains(string(h), `<pre id="workers">`) || !strings.Contains(string(h), "generator-limited: open files") {
				t.Errorf("report.html (%v) has no workers table marking worker 2", err)
			}
			t.Logf("workers table:\n%s", table)
		})
	}
}

// starvedCluster runs `apiperf sub args...` as the manifests' coordinator and three worker
// processes, worker 2 under `ulimit -n 24`; it returns the coordinator's stdout once all
// ended (the coordinator with exit 1: its only step is generator-limited), and its stderr.
func starvedCluster(t *testing.T, sub string, args []string) (string, string) {
	t.Helper()
	srv, _ := acceptingServer(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	coordArgv, workerArgv := clusterCommands(t, exe, freeAddr(t), sub, srv.URL+"/", args...)
	coord := startWatched(t, 0, coordArgv[1:]...)
	workers := startWorkers(t, coord, workerArgv, 0, 24, 0)
	select {
	case <-coord.done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("the coordinator did not end within 2 minutes; stderr:\n%s", coord.stderr.String())
	}
	if coord.code != ExitFailed {
		t.Errorf("coordinator exited %d, want %d; stderr:\n%s", coord.code, ExitFailed, coord.stderr.String())
	}
	for k, w := range workers {
		<-w.done
		if w.code != 0 {
			t.Errorf("worker %d exited %d; stderr:\n%s", k+1, w.code, w.stderr.String())
		}
	}
	return coord.stdout.String(), coord.stderr.String()
}

// startWorkers starts a worker process per files (its `ulimit -n`, 0: unchanged), each once
// the one before has joined coord, so that they are numbered in that order.
func startWorkers(t *testing.T, coord *watched, workerArgv []string, files ...int) []*watched {
	t.Helper()
	var workers []*watched
	for k, files := range files {
		joined := "as worker " + strconv.Itoa(k+1) + " of 3"
		w := startWatched(t, files, workerArgv[1:]...)
		// A handshake gets 3s: on a machine this busy one may time out (the worker is refused
		// and exits); a new worker process takes its place.
		for try := 1; !w.waitFor(joined, 60*time.Second); try++ {
			if try == 3 {
				t.Fatalf("worker %d did not say %q; stderr:\n%s\ncoordinator:\n%s", k+1, joined, w.stderr.String(), coord.stderr.String())
			}
			<-w.done
			w = startWatched(t, files, workerArgv[1:]...)
		}
		workers = append(workers, w)
	}
	return workers
}

// checkStarvedRecord checks run.json's cluster record of starvedCluster: every worker's
// conditions, machine and CPU, 20 connections asked each, only worker 2 limited (EMFILE).
func checkStarvedRecord(t *testing.T, r *result.Run) {
	t.Helper()
	c := r.Cluster
	if c == nil || c.Version != 2 || len(c.Steps) != 1 || len(c.Steps[0].Workers) != 3 || len(c.Shares) != 3 {
		t.Fatalf("run.json cluster record %+v; want version 2 with one step of 3 workers", c)
	}
	for k, h := range c.Steps[0].Workers {
		limited := k == 1
		// A healthy worker may open fewer on a busy machine (a dial that timed out): only the
		// limit tells them apart.
		if h.Worker != k+1 || (h.Limit != nil) != limited || h.Asked != 20 || (limited && h.Opened >= h.Asked) || h.Generator == nil || h.Conditions == nil || c.Shares[k].Machine == nil {
			t.Errorf("worker %d: health %+v (limit %+v), machine %+v; want its conditions, machine, CPU, 20 connections asked, limited: %v",
				k+1, h, h.Limit, c.Shares[k].Machine, limited)
		}
	}
	if h := c.Steps[0].Workers[1]; h.Limit != nil && (h.Limit.Errno != "EMFILE" || h.Opened <= 0) {
		t.Errorf("worker 2's limit %+v, %d opened; want EMFILE after some connections", h.Limit, h.Opened)
	}
}

// workersBlock is the workers table in a command's stdout: from its "  Workers:" line, its
// rows and the lines about single workers below it.
func workersBlock(stdout string) string {
	i := strings.Index(stdout, "  Workers: ")
	if i < 0 {
		return ""
	}
	var b strings.Builder
	for j, line := range strings.SplitAfter(stdout[i:], "\n") {
		if j > 0 && !strings.HasPrefix(line, "    ") && !strings.HasPrefix(line, "  worker ") && !strings.HasPrefix(line, "  others*") {
			break
		}
		b.WriteString(line)
	}
	return b.String()
}

// TestK8sFetchFromCoordinator: the coordinator of manifests without a claim (here run with a
// failing objective, exit 1) serves its finished results until `apiperf k8s fetch --addr`
// takes them, then ends with the run's exit code; what is fetched is run.json and the outputs
// rendered from it, workers table included.
func TestK8sFetchFromCoordinator(t *testing.T) {
	if testing.Short() {
		t.Skip("processes")
	}
	srv, _ := acceptingServer(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	coordArgv, workerArgv := clusterCommandsWith(t, []string{"--fetch-timeout", "2m"}, exe, addr, "run", srv.URL+"/",
		"-n", "300", "-c", "3", "--objective", "p99<=1ns")
	coord := startWatched(t, 0, coordArgv[1:]...)
	startWorkers(t, coord, workerArgv, 0, 0, 0)
	if !coord.waitFor("apiperf: serving the results", 90*time.Second) {
		t.Fatalf("the coordinator did not serve its results; stderr:\n%s", coord.stderr.String())
	}
	select {
	case <-coord.done:
		t.Fatalf("the coordinator ended before it was fetched (exit %d)", coord.code)
	default:
	}
	t.Setenv(tokenEnv, "proc-test-token-0123456789")
	out := filepath.Join(t.TempDir(), "fetched")
	code, stdout, stderr := runCLI(t, "k8s", "fetch", "--addr", addr, "--out", out)
	if code != ExitOK {
		t.Fatalf("apiperf k8s fetch = exit %d; stderr %s", code, stderr)
	}
	for _, f := range []string{"run.json", report.HTMLFile, report.WorkersFile, report.BenchFile} {
		if !strings.Contains(stdout, f+"\n") {
			t.Errorf("fetch listed %q; want %s among them", stdout, f)
		}
	}
	r, err := result.Load(filepath.Join(out, "run.json"))
	if err != nil || r.Cluster == nil || r.Last().Requests != 300 {
		t.Errorf("fetched run.json: %v; want the 300 requests of 3 workers", err)
	}
	select {
	case <-coord.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("the coordinator still runs 30s after the fetch; stderr:\n%s", coord.stderr.String())
	}
	if coord.code != ExitFailed {
		t.Errorf("coordinator exit %d after the fetch; want the run's %d (its objective failed); stderr:\n%s", coord.code, ExitFailed, coord.stderr.String())
	}
}
