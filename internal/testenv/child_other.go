//go:build !linux

package testenv

import (
	"net"
	"testing"
)

// Child says how ChildProcess runs a test (see the Linux version).
type Child struct {
	NetNS     bool
	PortRange string
	Files     uint64
	Env       []string
}

// ChildProcess skips t: network namespaces and the re-executed child need Linux.
func ChildProcess(t *testing.T, c Child) bool {
	t.Skip("child processes in a namespace of their own need Linux")
	return false
}

// Listen listens on 127.0.0.1 at a free port.
func Listen(t testing.TB) net.Listener {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return l
}
