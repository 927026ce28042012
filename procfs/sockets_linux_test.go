package procfs

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tcpTable is /proc/net/tcp as the kernel prints it (little-endian words): a listener on
// 127.0.0.1:8080, two connections from 127.0.0.1 to it (one in TIME_WAIT), one from
// 127.0.0.2, one to another port, a malformed line, and one far longer than any real line.
const tcpTable = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 11 1 0 100 0 0 10 0
   1: 0100007F:9C40 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 12 1
   2: 0100007F:9C41 0100007F:1F90 06 00000000:00000000 03:00001770 00000000     0        0 0 3
   3: 0200007F:9C40 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 14 1
   4: 0100007F:9C42 0100007F:1F91 01 00000000:00000000 00:00000000 00000000     0        0 15 1
   5: 0100007F:ZZZZ 0100007F:1F91 01 00000000:00000000 00:00000000 00000000     0        0 16 1
`

const tcp6Table = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0000000000000000FFFF00000200007F:9C43 0000000000000000FFFF00000100007F:1F90 01 00000000:00000000 00:00000000 00000000 0 0 21 1
   1: 00000000000000000000000001000000:0050 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000 7 0 22 1
`

func fakeNet(t *testing.T, tcp, tcp6 string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "net"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"tcp": tcp, "tcp6": tcp6} {
		if text != "" {
			if err := os.WriteFile(filepath.Join(dir, "net", name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

func TestSockets(t *testing.T) {
	long := "   6: " + strings.Repeat("0", 10000) + "\n"
	dir := fakeNet(t, tcpTable+long+"   7: 0100007F:9C44 0100007F:1F90 01 00000000:00000000 00:00000000 00000000 0 0 17 1\n", tcp6Table)
	var got []string
	if err := Sockets(dir, func(s Socket) {
		got = append(got, fmt.Sprintf("%s>%s/%x/%d/%d", s.Local, s.Remote, s.State, s.UID, s.Inode))
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"127.0.0.1:8080>0.0.0.0:0/a/1000/11",
		"127.0.0.1:40000>127.0.0.1:8080/1/0/12",
		"127.0.0.1:40001>127.0.0.1:8080/6/0/0",
		"127.0.0.2:40000>127.0.0.1:8080/1/0/14",
		"127.0.0.1:40002>127.0.0.1:8081/1/0/15",
		"127.0.0.1:40004>127.0.0.1:8080/1/0/17", // after the overlong line, skipped whole
		"[::ffff:127.0.0.2]:40003>[::ffff:127.0.0.1]:8080/1/0/21",
		"[::1]:80>[::]:0/a/7/22",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Sockets read:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// No IPv6 table: the IPv4 one alone, no error.
	n := 0
	if err := Sockets(fakeNet(t, tcpTable, ""), func(Socket) { n++ }); err != nil || n != 5 {
		t.Errorf("Sockets without tcp6 = %d sockets, %v; want 5, nil", n, err)
	}
}

// A line costs no allocation, so the reader's memory does not grow with the machine's sockets.
func TestParseSocketAllocs(t *testing.T) {
	line := []byte("   0: 0000000000000000FFFF00000200007F:9C43 0000000000000000FFFF00000100007F:1F90 01 00000000:00000000 00:00000000 00000000 0 0 21 1\n")
	if a := testing.AllocsPerRun(100, func() {
		if _, ok := parseSocket(line); !ok {
			t.Fatal("line not parsed")
		}
	}); a != 0 {
		t.Errorf("parseSocket allocates %.0f times per line; want 0", a)
	}
}

func TestPortsToward(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// At least ours: a socket of another test that used this port number before (TIME_WAIT)
	// may count too; TestSockets checks the counting itself on a fixed table.
	used, err := PortsToward(netip.MustParseAddrPort(l.Addr().String()))
	if n := used[netip.MustParseAddr("127.0.0.1")]; err != nil || n < 1 {
		t.Errorf("PortsToward(%s) from 127.0.0.1 = %d, %v; want our connection counted", l.Addr(), n, err)
	}
	port := uint16(l.Addr().(*net.TCPAddr).Port)
	if ok, err := Serves(os.Getpid(), port); !ok || err != nil {
		t.Errorf("Serves(self, %d) = %v, %v; want true", port, ok, err)
	}
	if ok, err := Serves(os.Getpid(), uint16(c.LocalAddr().(*net.TCPAddr).Port)); ok || err != nil {
		t.Errorf("Serves(self, a client port) = %v, %v; want false", ok, err)
	}
}
