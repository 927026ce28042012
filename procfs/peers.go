package procfs

import (
	"cmp"
	"fmt"
	"maps"
	"net/netip"
	"os"
	"slices"
	"strings"
	"time"
)

// Peer is a remote address a process holds connections to, and how many; when the other
// end is a process of this machine, which (the process holding the sockets at that end:
// PostgreSQL's backends, MariaDB's server) and the CPU it used while they were watched.
type Peer struct {
	Addr     netip.AddrPort `json:"addr"`
	Conns    int            `json:"conns"`
	PIDs     []int          `json:"pids,omitempty"`
	Command  string         `json:"command,omitempty"`
	CPUCores float64        `json:"cpu_cores,omitempty"`
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
	ends := map[string]netip.AddrPort{} // the other end's socket (its local, its remote) -> the peer
	for _, s := range socks {
		if s.State == TCPEstablished && !listening[s.Local.Port()] {
			a := netip.AddrPortFrom(s.Remote.Addr().Unmap(), s.Remote.Port())
			counts[a]++
			if a.Addr().IsLoopback() {
				ends[endKey(s.Remote, s.Local)] = a
			}
		}
	}
	pids := peerProcesses(dir, ends)
	out := make([]Peer, 0, len(counts))
	for a, n := range counts {
		q := Peer{Addr: a, Conns: n, PIDs: slices.Sorted(maps.Keys(pids[a]))}
		if len(q.PIDs) > 0 {
			q.Command = command(q.PIDs[0])
		}
		out = append(out, q)
	}
	slices.SortFunc(out, func(a, b Peer) int {
		if c := cmp.Compare(b.Conns, a.Conns); c != 0 {
			return c
		}
		return a.Addr.Compare(b.Addr)
	})
	return out, nil
}

// endKey names a connection's socket by its two addresses, IPv4-mapped ones unmapped.
func endKey(local, remote netip.AddrPort) string {
	return netip.AddrPortFrom(local.Addr().Unmap(), local.Port()).String() + " " +
		netip.AddrPortFrom(remote.Addr().Unmap(), remote.Port()).String()
}

// peerProcesses finds, in the network namespace of dir, the sockets at the other end of
// the loopback connections in ends and the processes of this /proc holding them: the
// peer's processes by address. Processes this user may not inspect are left out.
func peerProcesses(dir string, ends map[string]netip.AddrPort) map[netip.AddrPort]map[int]bool {
	if len(ends) == 0 {
		return nil
	}
	want := map[uint64]listener{}
	peerOf := map[uint64]netip.AddrPort{}
	_ = Sockets(dir, func(s Socket) {
		if a, ok := ends[endKey(s.Local, s.Remote)]; ok && s.State == TCPEstablished && s.Inode != 0 {
			want[s.Inode] = listener{inode: s.Inode, uid: s.UID}
			peerOf[s.Inode] = a
		}
	})
	if len(want) == 0 {
		return nil
	}
	root := dir[:strings.LastIndexByte(dir, '/')] // "/proc" of "/proc/PID"
	out := map[netip.AddrPort]map[int]bool{}
	for pid, inodes := range holding(root, want) {
		for _, in := range inodes {
			a := peerOf[in]
			if out[a] == nil {
				out[a] = map[int]bool{}
			}
			out[a][pid] = true
		}
	}
	return out
}

// command is a process's command name (/proc/PID/comm), "" when unreadable.
func command(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// PeerCPU is the CPU time used so far by the processes of the local peers, by PID: read at
// a step's start and end, their difference is what the peers used meanwhile.
func PeerCPU(peers []Peer) map[int]time.Duration {
	out := map[int]time.Duration{}
	for _, q := range peers {
		for _, pid := range q.PIDs {
			if st, err := Read(pid); err == nil {
				out[pid] = st.CPU
			}
		}
	}
	return out
}
