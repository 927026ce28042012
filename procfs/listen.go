package procfs

import (
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
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
	for _, f := range []string{"net/tcp", "net/tcp6"} {
		b, err := os.ReadFile(root + "/" + f)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue // no IPv6
			}
			return 0, fmt.Errorf("finding the process listening on %s: %w", addr, err)
		}
		socks = append(socks, parseListeners(b, ip, addr.Port())...)
	}
	if len(socks) == 0 {
		return 0, fmt.Errorf("finding the process listening on %s: no socket listens there in this network namespace (a container's forwarded port?): %w", addr, ErrNotFound)
	}
	want := make(map[string]listener, len(socks))
	for _, s := range socks {
		want["socket:["+s.inode+"]"] = s
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
	if uid != strconv.Itoa(os.Getuid()) {
		return 0, fmt.Errorf("finding the process listening on %s: its socket belongs to user %s, whose processes this user (%d) may not inspect: %w", addr, uid, os.Getuid(), ErrNotFound)
	}
	if denied > 0 {
		return 0, fmt.Errorf("finding the process listening on %s: its socket is in no process this user may inspect (%d were not readable): %w", addr, denied, ErrNotFound)
	}
	return 0, fmt.Errorf("finding the process listening on %s: its socket is in no process of this /proc (another PID namespace?): %w", addr, ErrNotFound)
}

// listener is a listening socket's inode and owner's uid, both as /proc/net/tcp prints them.
type listener struct{ inode, uid string }

// parseListeners returns the sockets of a /proc/net/tcp or tcp6 text in LISTEN state on
// port, bound to ip or to the unspecified address (which accepts on every address).
func parseListeners(b []byte, ip netip.Addr, port uint16) []listener {
	var out []listener
	for _, s := range parseSockets(b) {
		if s.state != tcpListen || s.local.Port() != port || s.inode == "0" {
			continue
		}
		// An IPv4 wildcard accepts IPv4 only; an IPv6 one both (unless IPV6_V6ONLY).
		if a := s.local.Addr(); a.Unmap() == ip || a.IsUnspecified() && (a.Is6() || ip.Is4()) {
			out = append(out, listener{inode: s.inode, uid: s.uid})
		}
	}
	return out
}

// TCP states as /proc/net/tcp prints them.
const (
	tcpEstablished = "01"
	tcpListen      = "0A"
)

// socket is one line of /proc/net/tcp or tcp6.
type socket struct {
	local, remote netip.AddrPort
	state         string
	uid, inode    string
}

// parseSockets reads the sockets of a /proc/net/tcp or tcp6 text, skipping malformed lines.
func parseSockets(b []byte) []socket {
	var out []socket
	lines := strings.Split(string(b), "\n")
	for _, line := range lines[min(1, len(lines)):] {
		// sl local rem st tx:rx tr:when retrnsmt uid timeout inode ...
		f := strings.Fields(line)
		if len(f) < 10 {
			continue
		}
		la, lp, ok1 := parseSockAddr(f[1])
		ra, rp, ok2 := parseSockAddr(f[2])
		if !ok1 || !ok2 {
			continue
		}
		out = append(out, socket{local: netip.AddrPortFrom(la, lp), remote: netip.AddrPortFrom(ra, rp), state: f[3], uid: f[7], inode: f[9]})
	}
	return out
}

// parseSockAddr reads "0100007F:1F90": the address as the kernel's 32-bit words in host byte
// order (little-endian on the machines this runs on), then the port in hex.
func parseSockAddr(s string) (netip.Addr, uint16, bool) {
	h, ps, ok := strings.Cut(s, ":")
	if !ok {
		return netip.Addr{}, 0, false
	}
	port, err := strconv.ParseUint(ps, 16, 16)
	if err != nil {
		return netip.Addr{}, 0, false
	}
	raw, err := hex.DecodeString(h)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.Addr{}, 0, false
	}
	for i := 0; i < len(raw); i += 4 {
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	a, _ := netip.AddrFromSlice(raw)
	return a, uint16(port), true
}

// holders returns the processes whose open files include one of the links in want, and how
// many processes' file tables could not be read.
func holders(root string, want map[string]listener) (map[int]bool, int) {
	pids := map[int]bool{}
	denied := 0
	ents, err := os.ReadDir(root)
	if err != nil {
		return pids, 0
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		dir := root + "/" + e.Name() + "/fd"
		fds, err := os.ReadDir(dir)
		if err != nil {
			if errors.Is(err, os.ErrPermission) {
				denied++
			}
			continue
		}
		for _, fd := range fds {
			link, err := os.Readlink(dir + "/" + fd.Name())
			if err == nil && strings.HasPrefix(link, "socket:[") {
				if _, ok := want[link]; ok {
					pids[pid] = true
					break
				}
			}
		}
	}
	return pids, denied
}
