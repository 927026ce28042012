// Package tracetarget runs the execution trace tests' target: a Go server with known
// behaviour (testdata/target: a fixed allocation per request, a CPU-bound handler inside a
// task and a region, a handler blocked on a channel), built once per test binary and
// started as its own process with the GOGC and GOMAXPROCS a test sets. Tests only.
package tracetarget

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// Paths of the target's handlers.
const (
	Alloc = "/alloc" // allocates 64 KiB per request over an 8 MiB live heap
	CPU   = "/cpu"   // burns CPU inside task "cpu-request" and region "burn"
	Block = "/block" // waits in main.waitForToken on a channel fed once per millisecond
)

var build = sync.OnceValues(func() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("tracetarget: no source path")
	}
	dir, err := os.MkdirTemp("", "apiperf-tracetarget-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "target")
	cmd := exec.Command("go", "build", "-o", bin, "./testdata/target")
	cmd.Dir = filepath.Dir(file)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build testdata/target: %v\n%s", err, out)
	}
	return bin, nil
})

// Start runs the target on a loopback port with env added (e.g. "GOGC=25") and returns its
// base URL; the process is killed when the test ends.
func Start(t testing.TB, env ...string) string {
	t.Helper()
	bin, err := build()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("trace target %v printed no address: %v", env, err)
	}
	base, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if !ok {
		t.Fatalf("trace target printed %q, want \"listening on URL\"", line)
	}
	return base
}
