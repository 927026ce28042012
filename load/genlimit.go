package load

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync/atomic"
	"syscall"

	"github.com/apiperf/apiperf/measure"
)

// limitOf says whether err, from opening a connection (socket, bind, connect), is a limit of
// apiperf's own machine rather than anything the target did: no local port left
// (EADDRNOTAVAIL on connect, EADDRINUSE on bind), no file descriptor for this process
// (EMFILE) or the system (ENFILE), no socket buffer memory (ENOBUFS, ENOMEM). It returns the
// limit, without its connection counts, or nil.
func limitOf(err error, p LocalAddrPlan) *measure.GeneratorLimit {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return nil
	}
	switch errno {
	case syscall.EADDRNOTAVAIL, syscall.EADDRINUSE:
		ports := p.Ports
		fix := fmt.Sprintf("open them from more source addresses with --source (a 127.x target spreads over 127.0.0.0/8 by itself), or widen net.ipv4.ip_local_port_range (now %s: %d ports per source address and target)",
			ports, ports.Ports())
		if n := len(p.Addrs); n > 1 {
			fix = fmt.Sprintf("give more source addresses with --source (%d in use), or widen net.ipv4.ip_local_port_range (now %s: %d ports per source address and target)",
				n, ports, ports.Ports())
		}
		if p.Held > 0 {
			fix += fmt.Sprintf("; %d of those ports were still held toward the target when the step began (earlier connections, in TIME_WAIT for up to 60 s)", p.Held)
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

// genLimits is what the core knows of the generator's own machine: where its connections
// come from (the source plan) and the first limit of the machine they met.
type genLimits struct {
	localAddrs LocalAddrPlan
	addrNext   atomic.Uint64                          // connections given a source so far
	limit      atomic.Pointer[measure.GeneratorLimit] // the first limit met; nil: none
	gaveUp     atomic.Int64                           // connections given up at a limit
}

// planLocalAddrs plans where the run's connections come from and makes the dialer bind them.
func (e *engine) planLocalAddrs(ctx context.Context) error {
	p, err := LocalAddrsFor(ctx, e.cfg, e.target)
	if err != nil {
		return err
	}
	e.localAddrs = p
	e.dial.useLocalAddrs(p, e.nextLocalAddr)
	return nil
}

// limited notes err when it is a limit of the generator's machine (the first one met is
// kept) and reports whether it is: the connection that met it is then given up, and nothing
// is counted against the target.
func (e *engine) limited(err error) bool {
	g := limitOf(err, e.localAddrs)
	if g == nil {
		return false
	}
	e.gaveUp.Add(1)
	e.limit.CompareAndSwap(nil, g)
	return true
}

// nextLocalAddr is the address the next connection is opened from (invalid: the kernel's choice).
func (e *engine) nextLocalAddr() netip.Addr {
	if len(e.localAddrs.Addrs) == 0 {
		return netip.Addr{}
	}
	return e.localAddrs.Addr(int(e.addrNext.Add(1) - 1))
}

// generatorLimit is the limit the step met with its counts, or nil: closed loop, the
// connections still kept of those asked for; open loop, those opened of the pool's limit.
func (e *engine) generatorLimit() *measure.GeneratorLimit {
	p := e.limit.Load()
	if p == nil {
		return nil
	}
	g := *p
	// Slots still dialing when the run ended were neither opened nor given up.
	g.Wanted, g.Connections = e.cfg.Connections, min(e.cfg.Connections-int(e.gaveUp.Load()), int(e.conns.Load()))
	if e.cfg.OpenLoop() {
		g.Wanted, g.Connections = e.cfg.MaxConns(), int(e.conns.Load())
	}
	return &g
}
