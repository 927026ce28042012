package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadFileRefuses: devices, FIFOs and files over MaxInputFile are refused at once with
// one line naming the file; a regular file is read whole.
func TestReadFileRefuses(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge.txt") // 1 GiB, sparse: made at once, removed with dir
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	ok := filepath.Join(dir, "ok.txt")
	os.WriteFile(ok, []byte("a\n\nb\r\n"), 0o600)
	for _, tc := range []struct {
		path, want string
	}{
		{"/dev/zero", "/dev/zero is a device, not a regular file"},       // would never end
		{"/dev/urandom", "/dev/urandom is a device, not a regular file"}, // nor this
		{fifo, fifo + " is a FIFO, not a regular file"},                  // would block on open
		{huge, huge + " is 1.0 GiB, over the 64.0 MiB limit"},            // would cost GBs of RSS
		{dir, "is a directory"},
	} {
		done := make(chan error, 1)
		go func() { _, err := ReadFile(tc.path); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("ReadFile(%s) = %v, want one line with %q", tc.path, err, tc.want)
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("ReadFile(%s) still blocks after 2s", tc.path)
		}
	}
	if b, err := ReadFile(ok); err != nil || string(b) != "a\n\nb\r\n" {
		t.Errorf("ReadFile(regular) = %q, %v", b, err)
	}
	lines, err := readLines(ok)
	if err != nil || strings.Join(lines, ",") != "a,b" {
		t.Errorf("readLines = %q, %v; want a,b", lines, err)
	}
	begin := time.Now()
	if _, err := parseTemplate("/{{line huge.txt}}", dir); err == nil || !strings.Contains(err.Error(), "over the 64.0 MiB limit") {
		t.Errorf("{{line}} of a 1 GiB file = %v, want the size limit named", err)
	}
	if took := time.Since(begin); took > 10*time.Second { // a hang detector: the size is checked before reading
		t.Errorf("refusing a 1 GiB {{line}} file took %v", took)
	}
}

// TestLinesBounded: a {{line}} file of more than maxLines short lines is refused.
func TestLinesBounded(t *testing.T) {
	p := filepath.Join(t.TempDir(), "short.txt")
	os.WriteFile(p, []byte(strings.Repeat("a\n", maxLines+1)), 0o600)
	if _, err := readLines(p); err == nil || !strings.Contains(err.Error(), "has over 4194304 lines, the limit for {{line}}") {
		t.Errorf("readLines of %d lines = %v, want the line limit named", maxLines+1, err)
	}
}
