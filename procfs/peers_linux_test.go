package procfs

import (
	"net"
	"os"
	"slices"
	"testing"
)

// This process dials two of its own listeners, three and two times: its outbound peers are
// those two addresses with those counts; the accepted ends (on its listening ports) are not.
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
		want = append(want, Peer{Addr: ap, Conns: n})
	}
	got, err := Outbound(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("Outbound = %v, want %v", got, want)
	}
	if _, err := Outbound(1 << 30); err == nil {
		t.Error("Outbound of a process that does not exist: no error")
	}
}
