package procfs

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func listenOn(t *testing.T, network, addr string) (net.Listener, netip.AddrPort) {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln, ln.Addr().(*net.TCPAddr).AddrPort()
}

// ListenPID finds this test process by its own listeners on 127.0.0.1 and ::1.
func TestListenPIDSelf(t *testing.T) {
	for _, tt := range []struct{ network, addr string }{{"tcp4", "127.0.0.1:0"}, {"tcp6", "[::1]:0"}} {
		_, ap := listenOn(t, tt.network, tt.addr)
		pid, err := ListenPID(ap)
		if err != nil || pid != os.Getpid() {
			t.Errorf("ListenPID(%v) = %d, %v; want this process %d", ap, pid, err, os.Getpid())
		}
	}
}

// A child that holds the listening socket (given to it, as a server's supervisor does) is
// the one found, not this process, which closed its copy.
func TestListenPIDChild(t *testing.T) {
	ln, ap := listenOn(t, "tcp4", "127.0.0.1:0")
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sleep", "30")
	cmd.ExtraFiles = []*os.File{f}
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start sleep: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	f.Close()
	ln.Close()
	pid, err := ListenPID(ap)
	if err != nil || pid != cmd.Process.Pid {
		t.Errorf("ListenPID(%v) = %d, %v; want the child %d", ap, pid, err, cmd.Process.Pid)
	}
}

// Nothing listening, and a remote address, are errors that say so.
func TestListenPIDNotFound(t *testing.T) {
	ln, ap := listenOn(t, "tcp4", "127.0.0.1:0")
	ln.Close()
	for _, tt := range []struct {
		ap   netip.AddrPort
		want string
	}{
		{ap, "no socket listens there"},
		{netip.MustParseAddrPort("192.0.2.1:80"), "not a loopback address"},
	} {
		pid, err := ListenPID(tt.ap)
		if err == nil || !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ListenPID(%v) = %d, %v; want an ErrNotFound saying %q", tt.ap, pid, err, tt.want)
		}
	}
}

// On a fake /proc: a wildcard listener on tcp6 counts for 127.0.0.1; a socket of another
// user that no readable process holds says whose it is; two holders are ambiguous.
func TestListenPIDFake(t *testing.T) {
	const head = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	const head6 = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	// :: on port 0x1F90 (8080), LISTEN, uid 1000, inode 555; 127.0.0.1:9090 established.
	tcp6 := head6 + "   0: 00000000000000000000000000000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  4242        0 555 1 0 100 0 0 10 0\n"
	tcp := head + "   0: 0100007F:2382 0100007F:D000 01 00000000:00000000 00:00000000 00000000  1000        0 777 1 0 100 0 0 10 0\n"
	root := t.TempDir()
	write(t, filepath.Join(root, "net", "tcp"), tcp)
	write(t, filepath.Join(root, "net", "tcp6"), tcp6)
	ap := netip.MustParseAddrPort("127.0.0.1:8080")
	if _, err := listenPID(root, ap); err == nil || !strings.Contains(err.Error(), "user 4242") {
		t.Errorf("listenPID of another user's socket: %v, want an error naming user 4242", err)
	}
	for _, pid := range []string{"41", "42"} {
		dir := filepath.Join(root, pid, "fd")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("socket:[555]", filepath.Join(dir, "3")); err != nil {
			t.Fatal(err)
		}
		if pid == "41" {
			if got, err := listenPID(root, ap); got != 41 || err != nil {
				t.Errorf("listenPID with pid 41 holding a wildcard tcp6 listener = %d, %v; want 41", got, err)
			}
		}
	}
	if _, err := listenPID(root, ap); err == nil || !strings.Contains(err.Error(), "[41 42]") {
		t.Errorf("listenPID with two holders: %v, want an error naming both", err)
	}
	if _, err := listenPID(root, netip.MustParseAddrPort("127.0.0.1:9090")); !errors.Is(err, ErrNotFound) {
		t.Errorf("listenPID of an established, not listening, socket: %v, want ErrNotFound", err)
	}
}

func TestParseSockAddr(t *testing.T) {
	for s, want := range map[string]string{
		"0100007F:1F90":                         "127.0.0.1:8080",
		"00000000000000000000000001000000:0050": "[::1]:80",
		"0000000000000000FFFF00000100007F:0050": "[::ffff:127.0.0.1]:80",
	} {
		ap, ok := parseSockAddr([]byte(s))
		if got := ap.String(); !ok || got != want {
			t.Errorf("parseSockAddr(%q) = %s, %v; want %s", s, got, ok, want)
		}
	}
}
