package load

import (
	"net/netip"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// bindSource binds socket fd to source address a before its connect, with
// IP_BIND_ADDRESS_NO_PORT: the kernel then picks the port at connect, per destination, so
// one source address holds a whole port range to each target address and port. An
// invalid a leaves the choice to the kernel.
func bindSource(fd int, a netip.Addr) error {
	if !a.IsValid() {
		return nil
	}
	if err := noPort(fd); err != nil {
		return err
	}
	var sa syscall.Sockaddr
	if a.Is4() {
		sa = &syscall.SockaddrInet4{Addr: a.As4()}
	} else {
		sa = &syscall.SockaddrInet6{Addr: a.As16()}
	}
	if err := syscall.Bind(fd, sa); err != nil {
		return os.NewSyscallError("bind", err)
	}
	return nil
}

// noPort sets IP_BIND_ADDRESS_NO_PORT on fd (an IPPROTO_IP option, on IPv6 sockets too).
func noPort(fd int) error {
	if err := syscall.SetsockoptInt(fd, syscall.IPPROTO_IP, unix.IP_BIND_ADDRESS_NO_PORT, 1); err != nil {
		return os.NewSyscallError("setsockopt IP_BIND_ADDRESS_NO_PORT", err)
	}
	return nil
}

// noPortControl is a net.Dialer Control that sets IP_BIND_ADDRESS_NO_PORT before the
// dialer binds its LocalAddr.
func noPortControl(_, _ string, c syscall.RawConn) error {
	var serr error
	if err := c.Control(func(fd uintptr) { serr = noPort(int(fd)) }); err != nil {
		return err
	}
	return serr
}
