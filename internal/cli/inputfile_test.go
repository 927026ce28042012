package cli

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestBodyFileRefused: --body-file of a device, a FIFO or a 1 GiB file is one line and exit
// 2 before any traffic, at once (a FIFO's open does not block).
func TestBodyFileRefused(t *testing.T) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served.Add(1) }))
	defer srv.Close()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge.bin")
	if f, err := os.Create(huge); err != nil {
		t.Fatal(err)
	} else {
		f.Truncate(1 << 30) // sparse: instant, removed with dir
		f.Close()
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--body-file", "/dev/zero"}, "--body-file: /dev/zero is a device, not a regular file"},
		{[]string{"--body-file", "/dev/urandom"}, "--body-file: /dev/urandom is a device, not a regular file"},
		{[]string{"--body-file", fifo}, "is a FIFO, not a regular file"},
		{[]string{"--body-file", huge}, "is 1.0 GiB, over the 64.0 MiB limit"},
	} {
		begin := time.Now()
		args := append(append([]string{"run", "-d", "1s", "-c", "1"}, tc.args...), srv.URL)
		code, _, stderr := runCLI(t, args...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("apiperf %q = exit %d, stderr %q; want exit 2 and one line with %q", args, code, stderr, tc.want)
		}
		if took := time.Since(begin); took > 10*time.Second { // refused at once; reading /dev/zero would never end
			t.Errorf("apiperf %q took %v", args, took)
		}
	}
	if served.Load() != 0 {
		t.Errorf("the target got %d requests from refused runs", served.Load())
	}
}
