//go:build linux

package load

import (
	"net"
	"syscall"
	"testing"
	"time"
)

// TestStampReader: bytes that arrived 30 ms before they are read carry their arrival time,
// not the read's; the open loop records responses by it when it sleeps through arrivals.
func TestStampReader(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	raw, err := client.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var ok bool
	raw.Control(func(fd uintptr) { ok = stampConn(int(fd)) })
	if !ok {
		t.Skip("SO_TIMESTAMPNS refused")
	}
	var r stampReader
	buf := make([]byte, 64)
	// The first bytes may come unstamped: the kernel turns stamping on shortly after a socket
	// asks for it.
	for i, msg := range []string{"warm-up", "first", "second response"} {
		sent := time.Now()
		if _, err := server.Write([]byte(msg)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(30 * time.Millisecond)
		var n int
		var stamp int64
		var rerr syscall.Errno
		read := time.Now()
		raw.Read(func(fd uintptr) bool {
			n, stamp, rerr = r.read(int(fd), buf)
			return rerr != syscall.EAGAIN
		})
		if rerr != 0 || string(buf[:n]) != msg {
			t.Fatalf("read = %q, %v; want %q", buf[:n], rerr, msg)
		}
		if i == 0 {
			continue
		}
		arrived := time.Unix(0, stamp)
		if arrived.Before(sent.Add(-time.Millisecond)) || arrived.After(sent.Add(20*time.Millisecond)) || !arrived.Before(read) {
			t.Errorf("%q: stamp %v; want about when it was sent (%v), before the read (%v)", msg, arrived.Format(time.StampMicro), sent.Format(time.StampMicro), read.Format(time.StampMicro))
		}
	}
}

// TestServedHere: a port this process listens on is served here; a port nobody listens on
// is not (the open loop then keeps its P in short waits).
func TestServedHere(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if !servedHere(port) {
		t.Errorf("servedHere(%d) = false for this process's own listener", port)
	}
	ln.Close()
	if servedHere(port) {
		t.Errorf("servedHere(%d) = true after the listener closed", port)
	}
}
