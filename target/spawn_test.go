package target

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	builtExe  string
	buildErr  error
	buildOut  []byte
)

// apiperfBinary builds ./cmd/apiperf once per test run.
func apiperfBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the apiperf binary; skipped with -short")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "apiperf-target-test")
		if err != nil {
			buildErr = err
			return
		}
		builtExe = filepath.Join(dir, "apiperf")
		if runtime.GOOS == "windows" {
			builtExe += ".exe"
		}
		cmd := exec.Command("go", "build", "-o", builtExe, "github.com/apiperf/apiperf/cmd/apiperf")
		buildOut, buildErr = cmd.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("go build ./cmd/apiperf: %v\n%s", buildErr, buildOut)
	}
	return builtExe
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builtExe != "" {
		os.RemoveAll(filepath.Dir(builtExe))
	}
	os.Exit(code)
}

func TestSpawn(t *testing.T) {
	exe := apiperfBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := Spawn(ctx, exe, "--status", "201")
	if err != nil {
		t.Fatalf("Spawn: %v", err)
	}
	if !strings.HasPrefix(p.URL(), "http://127.0.0.1:") || strings.HasSuffix(p.URL(), ":0") {
		t.Errorf("URL() = %q, want http://127.0.0.1:PORT with the real port", p.URL())
	}
	code, _, body := get(t, p.URL()+"/healthz")
	if code != 201 || string(body) != `{"status":"ok"}` {
		t.Errorf("GET child /healthz = %d %q, want 201 {\"status\":\"ok\"}", code, body)
	}
	if !strings.Contains(p.Stderr(), "plain target on 127.0.0.1:0 (status 201)") {
		t.Errorf("child stderr %q lacks its description line", p.Stderr())
	}
	begin := time.Now()
	if err := p.Stop(); err != nil {
		t.Errorf("Stop: %v (stderr %q)", err, p.Stderr())
	}
	if d := time.Since(begin); d > 3*time.Second {
		t.Errorf("Stop took %v, want a prompt graceful exit", d)
	}
	if err := p.Stop(); err != nil {
		t.Errorf("second Stop = %v, want nil (idempotent)", err)
	}
}

func TestSpawnFailure(t *testing.T) {
	exe := apiperfBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// A bad flag: the child exits 2 and Spawn reports its stderr.
	_, err := Spawn(ctx, exe, "--status", "42")
	if err == nil || !strings.Contains(err.Error(), "status 42 is outside") || !strings.Contains(err.Error(), "exit status 2") {
		t.Errorf("Spawn with --status 42 = %v, want an error with the exit status and the child's message", err)
	}
	// A missing executable is reported too.
	if _, err := Spawn(ctx, filepath.Join(t.TempDir(), "nope")); err == nil {
		t.Errorf("Spawn of a missing executable = nil error")
	}
}
