package procfs

import (
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"unsafe"
)

// ErrNotFound is wrapped by ListenPID when no process it may see listens on the address.
var ErrNotFound = errors.New("no listening process found")

// ListenPID is the process listening on TCP address addr of this machine: the socket in
// LISTEN state on addr's port, bound to addr or to every address, in /proc/net/tcp and tcp6,
// and the process holding that socket's inode in /proc/PID/fd. The address must be a
// loopback one: a remote host's processes are not in this /proc. The error says why it was
// not found: nothing listens in this network namespace (a container's port forwarded here,
// say), or the socket belongs to a process this user may not inspect (another user's).
// Several processes holding listening sockets on the port (forked or SO_REUSEPORT workers)
// are an error too: which one to watch is the user's choice.
func ListenPID(addr netip.AddrPort) (int, error) {
	return listenPID("/proc", addr)
}

// listenPID is ListenPID with /proc at root.
func listenPID(root string, addr netip.AddrPort) (int, error) {
	ip := addr.Addr().Unmap()
	if !ip.IsLoopback() {
		return 0, fmt.Errorf("finding the process listening on %s: not a loopback address, its process may be on another host: %w", addr, ErrNotFound)
	}
	var socks []listener
	if err := Sockets(root, func(s Socket) {
		if l, ok := listensOn(s, ip, addr.Port()); ok {
			socks = append(socks, l)
		}
	}); err != nil {
		return 0, fmt.Errorf("finding the process listening on %s: %w", addr, err)
	}
	if len(socks) == 0 {
		return 0, fmt.Errorf("finding the process listening on %s: no socket listens there in this network namespace (a container's forwarded port?): %w", addr, ErrNotFound)
	}
	want := make(map[uint64]listener, len(socks))
	for _, s := range socks {
		want[s.inode] = s
	}
	pids, denied := holders(root, want)
	switch {
	case len(pids) == 1:
		for pid := range pids {
			return pid, nil
		}
	case len(pids) > 1:
		list := slices.Sorted(maps.Keys(pids))
		return 0, fmt.Errorf("finding the process listening on %s: %d processes listen there %v: %w", addr, len(pids), list, ErrNotFound)
	}
	uid := socks[0].uid
	if int(uid) != os.Getuid() {
		return 0, fmt.Errorf("finding the process listening on %s: its socket belongs to user %d, whose processes this user (%d) may not inspect: %w", addr, uid, os.Getuid(), ErrNotFound)
	}
	if denied > 0 {
		return 0, fmt.Errorf("finding the process listening on %s: its socket is in no process this user may inspect (%d were not readable): %w", addr, denied, ErrNotFound)
	}
	return 0, fmt.Errorf("finding the process listening on %s: its socket is in no process of this /proc (another PID namespace?): %w", addr, ErrNotFound)
}

// listener is a listening socket's inode and its owner's uid.
type listener struct {
	inode uint64
	uid   uint32
}

// listensOn says whether s is in LISTEN state on port, bound to ip or to the unspecified
// address (which accepts on every address).
func listensOn(s Socket, ip netip.Addr, port uint16) (listener, bool) {
	if s.State != TCPListen || s.Local.Port() != port || s.Inode == 0 {
		return listener{}, false
	}
	// An IPv4 wildcard accepts IPv4 only; an IPv6 one both (unless IPV6_V6ONLY).
	if a := s.Local.Addr(); a.Unmap() == ip || a.IsUnspecified() && (a.Is6() || ip.Is4()) {
		return listener{inode: s.Inode, uid: s.UID}, true
	}
	return listener{}, false
}

// holders returns the processes whose open files include one of the links in want, and how
// many processes' file tables could not be read.
func holders(root string, want map[uint64]listener) (map[int]bool, int) {
	pids := map[int]bool{}
	denied := scanHolders(root, want, func(pid int, _ uint64) bool {
		pids[pid] = true
		return false
	})
	return pids, denied
}

// holding returns the processes whose open files include links in want, with those links.
func holding(root string, want map[uint64]listener) map[int][]uint64 {
	out := map[int][]uint64{}
	scanHolders(root, want, func(pid int, inode uint64) bool {
		out[pid] = append(out[pid], inode)
		return true
	})
	return out
}

// scanHolders calls found for each process of root and each of its open socket links in
// want (the next of its links only while found returns true), and returns how many
// processes' file tables could not be read. It reads the directories and links into one
// scratch: with os.ReadDir and os.Readlink, a walk made about 300 bytes of garbage per open
// file of the machine (260 KB for 873 files), before the load and never collected in a short
// run.
func scanHolders(root string, want map[uint64]listener, found func(pid int, inode uint64) bool) int {
	sc := getScratch()
	defer putScratch(sc)
	dents, link := sc.data[:4096], sc.data[4096:]
	denied := 0
	_, _ = eachEntry(root, sc.dents[:], func(name []byte) bool {
		if len(name) == 0 || name[0] < '0' || name[0] > '9' || len(root)+len(name)+4 > len(sc.dir) {
			return true // not a process (a failed decInt allocates its error)
		}
		pid, err := decInt(name)
		if err != nil {
			return true
		}
		d := append(append(append(append(sc.dir[:0], root...), '/'), name...), "/fd"...)
		dir := unsafe.String(unsafe.SliceData(d), len(d))
		_, err = eachEntry(dir, dents, func(fd []byte) bool {
			p := append(append(append(append(sc.path[:0], dir...), '/'), fd...), 0)
			l, err := readLink(p, link)
			if inode, ok := socketInode(unsafe.String(unsafe.SliceData(l), len(l))); err == nil && ok {
				if _, ok := want[inode]; ok && !found(int(pid), inode) {
					return false
				}
			}
			return true
		})
		if errors.Is(err, os.ErrPermission) {
			denied++
		}
		return true
	})
	return denied
}

// ErrNotLoopback: a target not on loopback may be on another host, whose processes are not in
// this /proc; its process is not looked for.
var ErrNotLoopback = errors.New("not a loopback address, the target may be on another host")

// LoopbackListener finds the process listening on host:port when host is this machine's
// loopback ("localhost": 127.0.0.1, then ::1); how says where it was found ("listening on
// 127.0.0.1:8080"). A host that is not loopback is an error wrapping ErrNotLoopback, read
// from nothing.
func LoopbackListener(host, port string) (pid int, how string, err error) {
	pn, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return 0, "", fmt.Errorf("port %q: %w", port, err)
	}
	var addrs []netip.Addr
	if strings.EqualFold(host, "localhost") {
		addrs = []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.IPv6Loopback()}
	} else if a, perr := netip.ParseAddr(host); perr == nil {
		addrs = []netip.Addr{a}
	} else {
		return 0, "", fmt.Errorf("%s is a host name: %w", host, ErrNotLoopback)
	}
	if !addrs[0].Unmap().IsLoopback() {
		return 0, "", fmt.Errorf("%s: %w", host, ErrNotLoopback)
	}
	var first error
	for _, a := range addrs {
		ap := netip.AddrPortFrom(a, uint16(pn))
		pid, err := ListenPID(ap)
		if err == nil {
			return pid, "listening on " + ap.String(), nil
		}
		if first == nil {
			first = err
		}
	}
	return 0, "", first
}
