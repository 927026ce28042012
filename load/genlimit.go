package load

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/apiperf/apiperf/measure"
)

// limitOf says whether err, from opening a connection (socket, bind, connect), is a limit of
// apiperf's own machine rather than anything the target did: no local port left
// (EADDRNOTAVAIL on connect, EADDRINUSE on bind), no file descriptor for this process
// (EMFILE) or the system (ENFILE), no socket buffer memory (ENOBUFS, ENOMEM). It returns the
// limit, without its connection counts, or nil.
func limitOf(err error, ports PortRange, sources int) *measure.GeneratorLimit {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return nil
	}
	switch errno {
	case syscall.EADDRNOTAVAIL, syscall.EADDRINUSE:
		fix := fmt.Sprintf("open them from more source addresses with --source (a 127.x target spreads over 127.0.0.0/8 by itself), or widen net.ipv4.ip_local_port_range (now %s: %d ports per source address and target)",
			ports, ports.Ports())
		if sources > 1 {
			fix = fmt.Sprintf("give more source addresses with --source (%d in use), or widen net.ipv4.ip_local_port_range (now %s: %d ports per source address and target)",
				sources, ports, ports.Ports())
		}
		return &measure.GeneratorLimit{Errno: errnoName(errno), Resource: "local ports", Fix: fix}
	case syscall.EMFILE:
		soft, hard := fileLimit()
		return &measure.GeneratorLimit{Errno: "EMFILE", Resource: "open files of apiperf's process",
			Fix: fmt.Sprintf("raise the open-file limit (now %d, hard limit %d): `ulimit -n N` before apiperf, as root for more than the hard limit, or in /etc/security/limits.conf", soft, hard)}
	case syscall.ENFILE:
		return &measure.GeneratorLimit{Errno: "ENFILE", Resource: "open files of the whole machine",
			Fix: "raise the system's file limit: `sysctl -w fs.file-max=N` (see /proc/sys/fs/file-nr), or close other programs' files"}
	case syscall.ENOBUFS, syscall.ENOMEM:
		return &measure.GeneratorLimit{Errno: errnoName(errno), Resource: "kernel socket memory",
			Fix: "raise net.ipv4.tcp_mem and net.core.optmem_max (sysctl), free memory, or open fewer connections"}
	}
	return nil
}

// errnoName is the symbolic name of the errnos limitOf knows.
func errnoName(e syscall.Errno) string {
	switch e {
	case syscall.EADDRNOTAVAIL:
		return "EADDRNOTAVAIL"
	case syscall.EADDRINUSE:
		return "EADDRINUSE"
	case syscall.ENOBUFS:
		return "ENOBUFS"
	case syscall.ENOMEM:
		return "ENOMEM"
	}
	return e.Error()
}

// fileLimit is the open-file limit (soft, hard); 0 when unknown.
func fileLimit() (soft, hard uint64) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, 0
	}
	return lim.Cur, lim.Max
}
