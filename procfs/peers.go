package procfs

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
)

// Peer is a remote address a process holds connections to, and how many.
type Peer struct {
	Addr  netip.AddrPort `json:"addr"`
	Conns int            `json:"conns"`
}

// Outbound lists the remote addresses process pid has established TCP connections to that
// it opened itself (its local port is none of its listening ports: a database, a cache, a
// downstream service), most connections first. It reads the process's own view of the
// network (/proc/PID/net/tcp and tcp6) and its sockets (/proc/PID/fd).
func Outbound(pid int) ([]Peer, error) {
	return outbound(fmt.Sprintf("/proc/%d", pid))
}

// outbound is Outbound of the process directory dir.
func outbound(dir string) ([]Peer, error) {
	mine, err := socketInodes(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the connections of %s: %w", dir, err)
	}
	var socks []Socket
	if err := Sockets(dir, func(s Socket) {
		if mine[s.Inode] {
			socks = append(socks, s)
		}
	}); err != nil {
		return nil, fmt.Errorf("reading the connections of %s: %w", dir, err)
	}
	listening := map[uint16]bool{}
	for _, s := range socks {
		if s.State == TCPListen {
			listening[s.Local.Port()] = true
		}
	}
	counts := map[netip.AddrPort]int{}
	for _, s := range socks {
		if s.State == TCPEstablished && !listening[s.Local.Port()] {
			counts[netip.AddrPortFrom(s.Remote.Addr().Unmap(), s.Remote.Port())]++
		}
	}
	out := make([]Peer, 0, len(counts))
	for a, n := range counts {
		out = append(out, Peer{Addr: a, Conns: n})
	}
	slices.SortFunc(out, func(a, b Peer) int {
		if c := cmp.Compare(b.Conns, a.Conns); c != 0 {
			return c
		}
		return a.Addr.Compare(b.Addr)
	})
	return out, nil
}
