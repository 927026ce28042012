package testenv

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// childEnv names the test a re-executed test binary runs as the child of ChildProcess.
const childEnv = "APIPERF_TEST_CHILD"

// Child says how ChildProcess runs a test: in a network namespace of its own (loopback up,
// PortRange as its ip_local_port_range), with an open-file limit, with Env added.
type Child struct {
	NetNS     bool   // a new network namespace (needs root, as in CI)
	PortRange string // e.g. "40000 40999"; "": the kernel's
	Files     uint64 // RLIMIT_NOFILE, soft and hard; 0: inherited
	Env       []string
}

// ChildProcess runs the calling top-level test again in a child process set up as c says,
// so a namespace or a lowered limit never touches this process. In the child it sets c up
// and returns true: the caller runs its body there. In the parent it waits (at most a
// minute) for the child, fails t when the child failed, and returns false.
func ChildProcess(t *testing.T, c Child) bool {
	t.Helper()
	if os.Getenv(childEnv) == t.Name() {
		c.setUp(t)
		return true
	}
	if c.NetNS && os.Geteuid() != 0 {
		t.Skip("a network namespace of its own needs root (CI runs as root)")
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = append(append(os.Environ(), c.Env...), childEnv+"="+t.Name())
	if c.NetNS {
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	}
	out, err := cmd.CombinedOutput()
	t.Logf("child process:\n%s", out)
	if err != nil {
		t.Fatalf("child process %v: %v", cmd.Args, err)
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("child process did not pass %s", t.Name())
	}
	return false
}

// setUp applies c in the child.
func (c Child) setUp(t *testing.T) {
	t.Helper()
	if c.NetNS {
		if err := loopbackUp(); err != nil {
			t.Fatalf("bringing loopback up in the namespace: %v", err)
		}
	}
	if c.PortRange != "" {
		if err := os.WriteFile("/proc/sys/net/ipv4/ip_local_port_range", []byte(c.PortRange), 0o644); err != nil {
			t.Fatalf("setting ip_local_port_range: %v", err)
		}
	}
	if c.Files > 0 {
		lim := syscall.Rlimit{Cur: c.Files, Max: c.Files}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			t.Fatalf("setting RLIMIT_NOFILE to %d: %v", c.Files, err)
		}
	}
}

// loopbackUp sets the IFF_UP flag of lo, as `ip link set lo up` does.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// nextPort is the next port Listen tries: below any ephemeral range the tests set.
var nextPort atomic.Int32

// Listen listens on 127.0.0.1 at a port below 32768, outside the local port ranges tests
// shrink, so a listener neither takes nor waits for a port the loads need (a port of the
// range is taken by every connection's TIME_WAIT after a few loads).
func Listen(t testing.TB) net.Listener {
	t.Helper()
	nextPort.CompareAndSwap(0, 20000)
	for range 1000 {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", nextPort.Add(1)))
		if err == nil {
			return l
		}
	}
	t.Fatal("no free port from 20000 up")
	return nil
}
