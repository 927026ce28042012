package procfs

import (
	"net"
	"os"
	"reflect"
	"slices"
	"testing"
)

// This process dials two of its own listeners, three and two times: its outbound peers are
// those two addresses with those counts; the accepted ends (on its listening ports) are not.
// The process at the other end of those connections, on this machine, is itself.
func TestOutbound(t *testing.T) {
	var want []Peer
	for _, n := range []int{3, 2} {
		ln, ap := listenOn(t, "tcp4", "127.0.0.1:0")
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				t.Cleanup(func() { c.Close() })
			}
		}()
		for range n {
			c, err := net.Dial("tcp4", ap.String())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
		}
		want = append(want, Peer{Addr: ap, Conns: n, PIDs: []int{os.Getpid()}, Command: command(os.Getpid())})
	}
	got, err := Outbound(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(got, want, func(a, b Peer) bool { return reflect.DeepEqual(a, b) }) || want[0].Command == "" {
		t.Errorf("Outbound = %v, want %v", got, want)
	}
	if _, err := Outbound(1 << 30); err == nil {
		t.Error("Outbound of a process that does not exist: no error")
	}
}

// PeerCPU reads the CPU time of a peer's processes: this process's, which grows.
func TestPeerCPU(t *testing.T) {
	self := Peer{PIDs: []int{os.Getpid()}}
	before := PeerCPU([]Peer{self})[os.Getpid()]
	for i := 0; PeerCPU([]Peer{self})[os.Getpid()] <= before; i++ {
		if i > 1e9 {
			t.Fatal("this process's CPU time never grew")
		}
	}
}
