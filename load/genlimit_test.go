package load

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"syscall"
	"testing"
)

func TestLimitOf(t *testing.T) {
	ports := PortRange{40000, 40999}
	wrapped := func(e syscall.Errno) error { // as net.Dial returns it
		return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", e)}
	}
	for _, tc := range []struct {
		err      error
		sources  int
		errno    string // "" for not the generator's
		resource string
		fix      string
	}{
		{wrapped(syscall.EADDRNOTAVAIL), 1, "EADDRNOTAVAIL", "local ports", "--source (a 127.x target spreads over 127.0.0.0/8 by itself), or widen net.ipv4.ip_local_port_range (now 40000-40999: 1000 ports"},
		{syscall.EADDRNOTAVAIL, 4, "EADDRNOTAVAIL", "local ports", "give more source addresses with --source (4 in use)"},
		{fmt.Errorf("bind: %w", syscall.EADDRINUSE), 1, "EADDRINUSE", "local ports", "ip_local_port_range"},
		{wrapped(syscall.EMFILE), 1, "EMFILE", "open files of apiperf's process", "ulimit -n"},
		{syscall.ENFILE, 1, "ENFILE", "open files of the whole machine", "fs.file-max"},
		{wrapped(syscall.ENOBUFS), 1, "ENOBUFS", "kernel socket memory", "tcp_mem"},
		{syscall.ENOMEM, 1, "ENOMEM", "kernel socket memory", "tcp_mem"},
		{wrapped(syscall.ECONNREFUSED), 1, "", "", ""}, // the target's
		{wrapped(syscall.ETIMEDOUT), 1, "", "", ""},    // the network's or the target's
		{errors.New("TLS handshake: bad certificate"), 1, "", "", ""},
	} {
		plan := LocalAddrPlan{Ports: ports}
		for range tc.sources {
			plan.Addrs = append(plan.Addrs, netip.MustParseAddr("127.0.0.1"))
		}
		g := limitOf(tc.err, plan)
		if tc.errno == "" {
			if g != nil {
				t.Errorf("limitOf(%v) = %+v; want nil (not the generator's)", tc.err, g)
			}
			continue
		}
		if g == nil || g.Errno != tc.errno || g.Resource != tc.resource || !strings.Contains(g.Fix, tc.fix) {
			t.Errorf("limitOf(%v) = %+v; want %s, %s, a fix with %q", tc.err, g, tc.errno, tc.resource, tc.fix)
		}
	}
}

// The fix says when earlier connections still held ports toward the target.
func TestLimitOfHeldPorts(t *testing.T) {
	g := limitOf(syscall.EADDRNOTAVAIL, LocalAddrPlan{Ports: PortRange{40000, 40999}, Held: 500})
	if g == nil || !strings.Contains(g.Fix, "500 of those ports were still held toward the target when the step began") {
		t.Errorf("limitOf with 500 ports held = %+v; want the fix to say so", g)
	}
}
