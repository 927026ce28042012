//go:build !linux

package load

import "syscall"

// noPortControl does nothing where IP_BIND_ADDRESS_NO_PORT does not exist: the dialer's
// bind then picks the port (one port range per source address, whatever the target).
func noPortControl(_, _ string, _ syscall.RawConn) error { return nil }
