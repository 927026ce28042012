package testenv

import (
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestChildProcessNetNS proves the child runs in a namespace of its own: its port range is
// the one asked for and its loopback works, while this process keeps its own.
func TestChildProcessNetNS(t *testing.T) {
	mine, _ := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if !ChildProcess(t, Child{NetNS: true, PortRange: "40000 40999", Files: 300}) {
		if now, _ := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); string(now) != string(mine) {
			t.Errorf("this process's port range changed to %q", now)
		}
		return
	}
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil || strings.Join(strings.Fields(string(b)), " ") != "40000 40999" {
		t.Errorf("child's port range %q, %v; want 40000 40999", b, err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen on loopback in the namespace: %v", err)
	}
	defer l.Close()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatalf("dial loopback in the namespace: %v", err)
	}
	c.Close()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Cur != 300 {
		t.Errorf("child's open-file limit %d, %v; want 300", lim.Cur, err)
	}
}
