package testenv

import (
	"net"
	"os"
	"os/exec"
	"testing"
)

// childServerEnv tells a re-executed test binary that it is a ServeInChild child.
const childServerEnv = "APIPERF_CHILD_SERVER"

// ServeInChild serves HTTP from another process: it listens on a loopback port, starts this
// test binary again running only the test named helper with the listener as fd 3, and
// returns the address and the child (killed at the test's end). Connections queue on the
// socket until the child serves them. helper calls ChildListener and serves on it.
func ServeInChild(t *testing.T, helper string) (addr string, child *exec.Cmd) {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	child = exec.Command(os.Args[0], "-test.run=^"+helper+"$")
	child.Env = append(os.Environ(), childServerEnv+"=1")
	child.ExtraFiles = []*os.File{f}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })
	f.Close()
	addr = ln.Addr().String()
	ln.Close() // the child holds the socket
	return addr, child
}

// ChildListener is the listener a ServeInChild child inherited; the helper test is skipped
// when it runs as an ordinary test.
func ChildListener(t *testing.T) net.Listener {
	t.Helper()
	if os.Getenv(childServerEnv) != "1" {
		t.Skip("a helper process of ServeInChild")
	}
	ln, err := net.FileListener(os.NewFile(3, "listener"))
	if err != nil {
		t.Fatal(err)
	}
	return ln
}
