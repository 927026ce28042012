//go:build linux

package load

import (
	"context"
	"errors"
	"net"
	"syscall"

	"github.com/apiperf/apiperf/scenario"
)

// copySockaddr gives each loop its own address: a syscall.Sockaddr keeps a buffer it writes
// on every Connect, so it cannot be shared between goroutines.
func copySockaddr(sa syscall.Sockaddr) syscall.Sockaddr {
	switch a := sa.(type) {
	case *syscall.SockaddrInet4:
		c := *a
		return &c
	case *syscall.SockaddrInet6:
		c := *a
		return &c
	}
	return sa
}

// sockaddr resolves the target once.
func sockaddr(ctx context.Context, t scenario.Target) (syscall.Sockaddr, int, error) {
	port, err := net.LookupPort("tcp", t.Port)
	if err != nil {
		return nil, 0, err
	}
	ip := net.ParseIP(t.Host)
	if ip == nil {
		ips, err := net.DefaultResolver.LookupIPAddr(ctx, t.Host)
		if err != nil || len(ips) == 0 {
			return nil, 0, errors.New("resolving " + t.Host + ": no address")
		}
		ip = ips[0].IP
	}
	if v4 := ip.To4(); v4 != nil {
		sa := &syscall.SockaddrInet4{Port: port}
		copy(sa.Addr[:], v4)
		return sa, syscall.AF_INET, nil
	}
	sa := &syscall.SockaddrInet6{Port: port}
	copy(sa.Addr[:], ip.To16())
	return sa, syscall.AF_INET6, nil
}
