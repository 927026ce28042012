package load

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
)

func TestParsePortRange(t *testing.T) {
	for _, tc := range []struct {
		in    string
		want  PortRange
		ports int
		err   bool
	}{
		{"32768\t60999\n", PortRange{32768, 60999}, 28232, false}, // Linux's default, as the file has it
		{"40000 40999", PortRange{40000, 40999}, 1000, false},     // the namespace
		{"5000 5000", PortRange{5000, 5000}, 1, false},            // one port
		{"60999 32768", PortRange{}, 0, true},                     // reversed
		{"0 100", PortRange{}, 0, true},                           // port 0 is not a port
		{"1 65536", PortRange{}, 0, true},                         // beyond 16 bits
		{"32768", PortRange{}, 0, true},                           // one number
		{"a b", PortRange{}, 0, true},                             // not numbers
	} {
		got, err := ParsePortRange(tc.in)
		if (err != nil) != tc.err || got != tc.want || got.Ports() != tc.ports {
			t.Errorf("ParsePortRange(%q) = %v (%d ports), %v; want %v (%d ports), error %v", tc.in, got, got.Ports(), err, tc.want, tc.ports, tc.err)
		}
	}
	if p := ReadPortRange(); p.Ports() < 1 {
		t.Errorf("ReadPortRange() = %v; want a range with ports", p)
	}
}

func TestParseLocalAddrs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // the addresses, or the error's text
	}{
		{"10.0.0.5", "[10.0.0.5]"},                                     // one address
		{"10.0.0.5-10.0.0.8", "[10.0.0.5 10.0.0.6 10.0.0.7 10.0.0.8]"}, // a range, both ends in
		{"10.0.0.255-10.0.1.1", "[10.0.0.255 10.0.1.0 10.0.1.1]"},      // a range across an octet
		{"127.0.0.1, 127.0.0.3,::1", "[127.0.0.1 127.0.0.3 ::1]"},      // a list of both families
		{"", "[]"}, // none: the kernel chooses
		{"fd00::1-fd00::3", "[fd00::1 fd00::2 fd00::3]"},    // IPv6 ranges
		{"::ffff:10.0.0.1", "[10.0.0.1]"},                   // IPv4-mapped reads as IPv4
		{"10.0.0.8-10.0.0.5", "FIRST not above LAST"},       // reversed range
		{"10.0.0.1-fd00::1", "of one family"},               // mixed families
		{"10.0.0.300", `"10.0.0.300" is not an IP address`}, // not an address
		{"0.0.0.0", "cannot be a source address"},           // unspecified
		{"255.255.255.255", "broadcast"},                    // the limited broadcast address
		{"10.0.0.254-255.255.255.255", "broadcast"},         // nor may a range end at it
		{"10.0.0.1,", "empty address"},                      // trailing comma
		{"10.0.0.1,10.0.0.1", "10.0.0.1 is given twice"},    // duplicate
		{"10.0.0.0-10.0.255.255", "at most 4096"},           // a typo'd range
	} {
		got, err := ParseLocalAddrs(tc.in)
		s := fmt.Sprint(got)
		if err != nil {
			s = err.Error()
		}
		if !strings.Contains(s, tc.want) {
			t.Errorf("ParseLocalAddrs(%q) = %s; want %s", tc.in, s, tc.want)
		}
	}
	// Every problem at once.
	_, err := ParseLocalAddrs("x,10.0.0.2-10.0.0.1")
	if err == nil || !strings.Contains(err.Error(), `"x"`) || !strings.Contains(err.Error(), "10.0.0.2-10.0.0.1") {
		t.Errorf("ParseLocalAddrs(two bad) = %v; want both named", err)
	}
}

func TestPlanLocalAddrs(t *testing.T) {
	ip := netip.MustParseAddr
	small := PortRange{40000, 40999} // 1000 ports
	for _, tc := range []struct {
		name    string
		target  string
		conns   int
		given   []netip.Addr
		used    map[netip.Addr]int // ports held toward the target per source
		sources string             // the plan's addresses
		auto    bool
		note    string // a phrase of the plan's note; "" for none
		err     string
	}{
		{"fits one address: the kernel chooses", "127.0.0.1", 1000, nil, nil, "[]", false, "", ""},
		{"loopback over the limit: spread over 127/8", "127.0.0.1", 1500, nil, nil, "[127.0.0.1 127.0.0.2]", true, "", ""},
		{"another 127.x target spreads too", "127.1.2.3", 2001, nil, nil, "[127.0.0.1 127.0.0.2 127.0.0.3]", true, "", ""},
		// the previous level's 700 connections in TIME_WAIT leave 300 ports on the target's own address
		{"ports held in TIME_WAIT are not free", "127.0.0.1", 1000, nil, map[netip.Addr]int{ip("127.0.0.1"): 700}, "[127.0.0.2]", true, "", ""},
		{"a busy address is skipped, the others share", "127.0.0.1", 1500, nil, map[netip.Addr]int{ip("127.0.0.1"): 900}, "[127.0.0.2 127.0.0.3]", true, "", ""},
		{"ports held on other addresses do not matter", "127.0.0.1", 900, nil, map[netip.Addr]int{ip("127.0.0.2"): 1000}, "[]", false, "", ""},
		{"::1 is one address and says so", "::1", 1500, nil, nil, "[]", false, "::1 is one address: it holds at most 1000 connections", ""},
		{"a remote target over the limit needs --source", "10.1.1.1", 5000, nil, nil, "[]", false, "give 5 addresses of this machine with --source", ""},
		{"a remote target with ports held needs --source", "10.1.1.1", 800, nil, map[netip.Addr]int{ip("10.0.0.9"): 500}, "[]", false, "one source address holds at most 1000", ""},
		{"given sources are used as given", "10.1.1.1", 1500, []netip.Addr{ip("10.0.0.5"), ip("10.0.0.6")}, nil, "[10.0.0.5 10.0.0.6]", false, "", ""},
		{"too few given sources say so", "127.0.0.1", 1500, []netip.Addr{ip("127.0.0.1")}, nil, "[127.0.0.1]", false, "1 source address has room for 1000 connections", ""}, // one address, said in the singular
		{"given sources with ports held say so", "127.0.0.1", 1500, []netip.Addr{ip("127.0.0.1"), ip("127.0.0.2")}, map[netip.Addr]int{ip("127.0.0.2"): 600}, "[127.0.0.1 127.0.0.2]", false, "2 source addresses have room for 1400 connections", ""},
		{"a source of the other family is an error", "127.0.0.1", 10, []netip.Addr{ip("::1")}, nil, "", false, "", "the target 127.0.0.1 is IPv4; give IPv4 source addresses"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := PlanLocalAddrs(ip(tc.target), tc.conns, small, tc.given, tc.used)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("PlanLocalAddrs error %v; want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(p.Addrs); got != tc.sources || p.Auto != tc.auto || p.PerAddr != 1000 {
				t.Errorf("plan %s auto %v per source %d; want %s auto %v per source 1000", got, p.Auto, p.PerAddr, tc.sources, tc.auto)
			}
			if (tc.note == "") != (p.Note == "") || !strings.Contains(p.Note, tc.note) {
				t.Errorf("note %q; want %q", p.Note, tc.note)
			}
		})
	}
	p, _ := PlanLocalAddrs(ip("127.0.0.1"), 2500, small, nil, nil)
	if got := p.String(); got != "connections from 3 source addresses 127.0.0.1-127.0.0.3 (chosen in 127.0.0.0/8; 1000 local ports each)" {
		t.Errorf("String() = %q", got)
	}
	if p.Addr(0) != ip("127.0.0.1") || p.Addr(4) != ip("127.0.0.2") || (LocalAddrPlan{}).Addr(3).IsValid() {
		t.Errorf("Source: connections are not dealt over the sources in turn")
	}
	held := map[netip.Addr]int{ip("127.0.0.1"): 300, ip("127.0.0.2"): 600, ip("127.0.0.9"): 50}
	if p, _ := PlanLocalAddrs(ip("127.0.0.1"), 500, small, []netip.Addr{ip("127.0.0.2")}, held); p.Held != 600 {
		t.Errorf("Held = %d with --source 127.0.0.2; want its 600", p.Held)
	}
	if p, _ := PlanLocalAddrs(ip("127.0.0.1"), 500, small, nil, held); len(p.Addrs) != 0 || p.Held != 300 {
		t.Errorf("Held = %d (sources %v) with the kernel's choice; want the target's own address's 300", p.Held, p.Addrs)
	}
	if p, _ := PlanLocalAddrs(ip("10.1.1.1"), 100, small, nil, held); p.Held != 600 {
		t.Errorf("Held = %d toward a remote target; want the busiest address's 600", p.Held)
	}
	if _, err := PlanLocalAddrs(ip("127.0.0.1"), 1, PortRange{}, nil, nil); err == nil {
		t.Errorf("PlanLocalAddrs with an empty port range: no error")
	}
}

func TestCheckLocalAddrs(t *testing.T) {
	if err := CheckLocalAddrs([]netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.9")}); err != nil {
		t.Errorf("CheckLocalAddrs(127.0.0.1, 127.0.0.9) = %v; want nil (127.0.0.0/8 is local)", err)
	}
	// 192.0.2.0/24 is TEST-NET-1: never an address of this machine.
	err := CheckLocalAddrs([]netip.Addr{netip.MustParseAddr("192.0.2.7")})
	if err == nil || !strings.Contains(err.Error(), "--source 192.0.2.7: not an address of this machine") {
		t.Errorf("CheckLocalAddrs(192.0.2.7) = %v; want it named not local", err)
	}
}
