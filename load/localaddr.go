package load

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"syscall"

	"github.com/apiperf/apiperf/procfs"
	"github.com/apiperf/apiperf/scenario"
)

// PortRange is the kernel's range of local ports for outgoing connections
// (net.ipv4.ip_local_port_range). One source address can hold one connection per port of it
// to one destination address and port.
type PortRange struct{ Lo, Hi int }

// DefaultPortRange is Linux's default range, used where the kernel's cannot be read.
var DefaultPortRange = PortRange{32768, 60999}

// Ports is how many ports the range holds (0 for the zero range).
func (p PortRange) Ports() int {
	if p.Lo < 1 || p.Hi < p.Lo {
		return 0
	}
	return p.Hi - p.Lo + 1
}

func (p PortRange) String() string { return fmt.Sprintf("%d-%d", p.Lo, p.Hi) }

// ParsePortRange reads the content of ip_local_port_range, e.g. "32768\t60999\n".
func ParsePortRange(s string) (PortRange, error) {
	f := strings.Fields(s)
	if len(f) != 2 {
		return PortRange{}, fmt.Errorf("port range %q: want two numbers", s)
	}
	lo, err1 := strconv.Atoi(f[0])
	hi, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || lo < 1 || hi > 65535 || hi < lo {
		return PortRange{}, fmt.Errorf("port range %q: want two ports, the first not above the second", s)
	}
	return PortRange{lo, hi}, nil
}

// ReadPortRange reads the kernel's local port range; DefaultPortRange where it cannot.
func ReadPortRange() PortRange {
	b, err := procfs.LocalPortRange()
	if err != nil {
		return DefaultPortRange
	}
	p, err := ParsePortRange(b)
	if err != nil {
		return DefaultPortRange
	}
	return p
}

// maxSources bounds --source: more addresses than a load can use is a typo.
const maxSources = 4096

// ParseLocalAddrs reads --source: addresses and ranges of addresses, comma separated, e.g.
// "10.0.0.5-10.0.0.8,10.0.1.1"; "" is none. Every problem is reported at once.
func ParseLocalAddrs(spec string) ([]netip.Addr, error) {
	if spec == "" {
		return nil, nil
	}
	var out []netip.Addr
	var errs []error
	seen := map[netip.Addr]bool{}
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		addrs, err := parseSourcePart(part)
		if err != nil {
			errs = append(errs, fmt.Errorf("--source %q: %w", part, err))
			continue
		}
		for _, a := range addrs {
			if seen[a] {
				errs = append(errs, fmt.Errorf("--source %q: %s is given twice", part, a))
				continue
			}
			seen[a] = true
			out = append(out, a)
		}
	}
	if len(out) > maxSources {
		errs = append(errs, fmt.Errorf("--source: %d addresses, at most %d", len(out), maxSources))
	}
	return out, errors.Join(errs...)
}

// parseSourcePart reads one address or range "A-B" (A and B of one family, A <= B).
func parseSourcePart(part string) ([]netip.Addr, error) {
	if part == "" {
		return nil, errors.New("empty address")
	}
	from, to, isRange := strings.Cut(part, "-")
	a, err := sourceAddr(from)
	if err != nil {
		return nil, err
	}
	if !isRange {
		return []netip.Addr{a}, nil
	}
	b, err := sourceAddr(to)
	if err != nil {
		return nil, err
	}
	if a.Is4() != b.Is4() || b.Less(a) {
		return nil, errors.New("want a range FIRST-LAST of one family, FIRST not above LAST, e.g. 10.0.0.5-10.0.0.8")
	}
	var out []netip.Addr
	for x := a; ; x = x.Next() {
		out = append(out, x)
		if x == b || len(out) > maxSources {
			return out, nil
		}
	}
}

// sourceAddr reads one address a connection can be bound to.
func sourceAddr(s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil {
		return netip.Addr{}, fmt.Errorf("%q is not an IP address", s)
	}
	a = a.Unmap()
	if a.IsUnspecified() || a.IsMulticast() || a == netip.AddrFrom4([4]byte{255, 255, 255, 255}) || a.Zone() != "" {
		return netip.Addr{}, fmt.Errorf("%s cannot be a source address (unspecified, multicast, broadcast or zoned)", a)
	}
	return a, nil
}

// LocalAddrPlan says which local addresses the connections are opened from: Addrs in turn
// (connection i from Addrs[i%len]), or the kernel's choice when there are none.
type LocalAddrPlan struct {
	Addrs  []netip.Addr
	Target netip.Addr // the target address planned for
	// PerAddr is how many connections one source address can hold to the target: the
	// ports of the local range.
	PerAddr int
	Ports   PortRange
	// Auto says apiperf chose the addresses itself (a 127.x target, spread over 127.0.0.0/8).
	Auto bool
	// Held is how many ports the plan's addresses (the kernel's choice: the target's own
	// address if it is loopback, else the busiest) already held toward the target: open
	// connections and TIME_WAIT.
	Held int
	// Note says what the plan cannot do, e.g. that ::1 is one address; "" when it fits.
	Note string
}

// maxAuto bounds the addresses of 127.0.0.0/8 a plan looks at.
const maxAuto = 4096

// PlanLocalAddrs plans the source addresses of conns connections to target, given the local
// port range and the ports already held toward the target per source address (used: open
// connections and those in TIME_WAIT, such as the previous level's): the given ones
// (--source) when there are any; for an IPv4 loopback target whose own address has too few
// free ports, as many addresses of 127.0.0.0/8 as it takes (all of it is local on Linux),
// each with room for its share; else the kernel's choice. A plan that cannot hold conns says
// so in its Note; addresses of another family than the target's are an error.
func PlanLocalAddrs(target netip.Addr, conns int, ports PortRange, given []netip.Addr, used map[netip.Addr]int) (LocalAddrPlan, error) {
	target = target.Unmap()
	p := LocalAddrPlan{PerAddr: ports.Ports(), Ports: ports, Addrs: given, Target: target}
	if p.PerAddr < 1 {
		return p, fmt.Errorf("the local port range %s has no port", ports)
	}
	free := func(a netip.Addr) int { return max(p.PerAddr-used[a], 0) }
	need := (conns + p.PerAddr - 1) / p.PerAddr // source addresses conns take at least
	switch {
	case len(given) > 0:
		room := 0
		for _, a := range given {
			if a.Is4() != target.Is4() {
				return p, fmt.Errorf("--source %s: the target %s is IPv%d; give IPv%d source addresses", a, target, family(target), family(target))
			}
			room += free(a)
		}
		if room < conns {
			who := fmt.Sprintf("%d source addresses have", len(given))
			if len(given) == 1 {
				who = "1 source address has"
			}
			p.Note = fmt.Sprintf("%s room for %d connections to %s (%d local ports each, ip_local_port_range %s, %d held already), not %d: give about %d addresses with --source",
				who, room, target, p.PerAddr, ports, len(given)*p.PerAddr-room, conns, max(need, len(given)+1))
		}
	case target.Is4() && target.IsLoopback():
		if free(target) >= conns {
			break // the kernel's choice, the target's own address, holds them
		}
		p.Auto = true
		p.Addrs = spread(conns, free)
		if p.Addrs == nil {
			p.Note = fmt.Sprintf("127.0.0.0/8 has no %d addresses with room for %d connections", maxAuto, conns)
		}
	case need <= 1 && p.PerAddr-busiest(used) >= conns:
		// One address, the kernel's choice, holds them.
	case target.IsLoopback():
		p.Note = fmt.Sprintf("::1 is one address: it holds at most %d connections to one port (ip_local_port_range %s), not %d; target 127.0.0.1 to spread over 127.0.0.0/8, or widen the range",
			p.PerAddr, ports, conns)
	default:
		p.Note = fmt.Sprintf("one source address holds at most %d connections to %s (ip_local_port_range %s), not %d: give %d addresses of this machine with --source",
			p.PerAddr, target, ports, conns, need)
	}
	p.Held = busiest(used)
	if target.IsLoopback() {
		p.Held = used[target] // the kernel's choice toward a loopback target is its own address
	}
	if len(p.Addrs) > 0 {
		p.Held = 0
		for _, a := range p.Addrs {
			p.Held += used[a]
		}
	}
	return p, nil
}

// busiest is the most ports any one source address holds toward the target.
func busiest(used map[netip.Addr]int) int {
	n := 0
	for _, u := range used {
		n = max(n, u)
	}
	return n
}

// spread picks the fewest addresses of 127.0.0.0/8, from 127.0.0.1 up, that hold conns
// connections dealt in turn: each with free ports for its share; nil when none do.
func spread(conns int, free func(netip.Addr) int) []netip.Addr {
	for n := 1; n <= maxAuto; n++ {
		share := (conns + n - 1) / n
		var out []netip.Addr
		a := netip.AddrFrom4([4]byte{127, 0, 0, 1})
		for i := 0; i < maxAuto+n && len(out) < n; i, a = i+1, a.Next() {
			if free(a) >= share {
				out = append(out, a)
			}
		}
		if len(out) == n {
			return out
		}
	}
	return nil
}

func family(a netip.Addr) int {
	if a.Is4() {
		return 4
	}
	return 6
}

// Addr is the address connection i is opened from; invalid when the kernel chooses.
func (p LocalAddrPlan) Addr(i int) netip.Addr {
	if len(p.Addrs) == 0 {
		return netip.Addr{}
	}
	return p.Addrs[i%len(p.Addrs)]
}

// String describes the plan for the banner, e.g. "connections from 2 source addresses
// 127.0.0.1-127.0.0.2 (chosen in 127.0.0.0/8; 1000 local ports each)"; "" when the kernel
// chooses.
func (p LocalAddrPlan) String() string {
	if len(p.Addrs) == 0 {
		return ""
	}
	how := "--source"
	if p.Auto {
		how = "chosen in 127.0.0.0/8"
	}
	if len(p.Addrs) == 1 {
		return fmt.Sprintf("connections from %s (%s; %d local ports)", p.Addrs[0], how, p.PerAddr)
	}
	return fmt.Sprintf("connections from %d source addresses %s (%s; %d local ports each)", len(p.Addrs), spanOf(p.Addrs), how, p.PerAddr)
}

// spanOf names addresses briefly: "A-B" when they are consecutive, else "A, B, ...".
func spanOf(as []netip.Addr) string {
	consecutive := true
	for i := 1; i < len(as); i++ {
		consecutive = consecutive && as[i] == as[i-1].Next()
	}
	if consecutive {
		return as[0].String() + "-" + as[len(as)-1].String()
	}
	if len(as) > 3 {
		return fmt.Sprintf("%s, %s, ... %s", as[0], as[1], as[len(as)-1])
	}
	parts := make([]string, len(as))
	for i, a := range as {
		parts[i] = a.String()
	}
	return strings.Join(parts, ", ")
}

// CheckLocalAddrs reports every given address that is not an address of this machine (one a
// socket cannot be bound to), so a typo in --source fails before any traffic.
func CheckLocalAddrs(addrs []netip.Addr) error {
	var errs []error
	for _, a := range addrs {
		l, err := net.ListenTCP("tcp", net.TCPAddrFromAddrPort(netip.AddrPortFrom(a, 0)))
		if errors.Is(err, syscall.EADDRNOTAVAIL) {
			errs = append(errs, fmt.Errorf("--source %s: not an address of this machine (%s)", a, dialReason(err)))
			continue
		}
		if err == nil { // else it is local, but no port was free to listen on
			l.Close()
		}
	}
	return errors.Join(errs...)
}

// ResolveTarget returns the address the target's host names (its first, as a dial would
// use it), for planning local addresses.
func ResolveTarget(ctx context.Context, host string) (netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Unmap(), nil
	}
	as, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("resolving %s: %w", host, err)
	}
	if len(as) == 0 {
		return netip.Addr{}, fmt.Errorf("resolving %s: no address", host)
	}
	return as[0].Unmap(), nil
}

// LocalAddrsFor plans the source addresses of a load: cfg's --source addresses, or the spread a
// loopback target needs, for the most connections cfg may open (the open loop's pool limit).
func LocalAddrsFor(ctx context.Context, cfg Config, t scenario.Target) (LocalAddrPlan, error) {
	given, err := ParseLocalAddrs(cfg.LocalAddrs)
	if err != nil {
		return LocalAddrPlan{}, err
	}
	addr, err := ResolveTarget(ctx, t.Host)
	if err != nil {
		if len(given) > 0 {
			return LocalAddrPlan{}, err
		}
		return LocalAddrPlan{PerAddr: ReadPortRange().Ports()}, nil // the dial will say what is wrong
	}
	port, err := net.LookupPort("tcp", t.Port)
	if err != nil {
		return LocalAddrPlan{}, err
	}
	used, err := procfs.PortsToward(netip.AddrPortFrom(addr, uint16(port)))
	if err != nil {
		used = nil // unknown
	}
	return PlanLocalAddrs(addr, cfg.Conns(), ReadPortRange(), given, used)
}
