package procfs

import (
	"cmp"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"strings"
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
	fds, err := os.ReadDir(dir + "/fd")
	if err != nil {
		return nil, fmt.Errorf("reading the connections of %s: %w", dir, err)
	}
	mine := map[string]bool{}
	for _, fd := range fds {
		if link, err := os.Readlink(dir + "/fd/" + fd.Name()); err == nil {
			if inode, ok := strings.CutPrefix(link, "socket:["); ok {
				mine[strings.TrimSuffix(inode, "]")] = true
			}
		}
	}
	var socks []socket
	for _, f := range []string{"net/tcp", "net/tcp6"} {
		if b, err := os.ReadFile(dir + "/" + f); err == nil {
			socks = append(socks, parseSockets(b)...)
		}
	}
	listening := map[uint16]bool{}
	for _, s := range socks {
		if s.state == tcpListen && mine[s.inode] {
			listening[s.local.Port()] = true
		}
	}
	counts := map[netip.AddrPort]int{}
	for _, s := range socks {
		if s.state == tcpEstablished && mine[s.inode] && !listening[s.local.Port()] {
			counts[netip.AddrPortFrom(s.remote.Addr().Unmap(), s.remote.Port())]++
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
