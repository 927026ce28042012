//go:build linux

package uring

import (
	"bytes"
	"errors"
	"io"
	"net"
	"runtime"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// newRing sets up a ring on the test's locked thread, or skips where io_uring is refused.
func newRing(t *testing.T, sq, cq uint32) *Ring {
	t.Helper()
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	r, err := New(sq, cq)
	if errors.Is(err, ErrUnsupported) {
		t.Skipf("io_uring: %v", err)
	}
	if err != nil {
		t.Fatalf("New(%d, %d): %v", sq, cq, err)
	}
	t.Cleanup(r.Close)
	return r
}

// socketPair returns our end (a raw non-blocking fd) and the peer's end of a loopback TCP
// connection.
func socketPair(t *testing.T) (int, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	peer, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	f, err := c.(*net.TCPConn).File() // a dup, blocking; make it non-blocking
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	fd, err := syscall.Dup(int(f.Fd()))
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd); peer.Close() })
	return fd, peer
}

// oneFile gives r a file table of one slot and puts fd in it.
func oneFile(t *testing.T, r *Ring, fd int) {
	t.Helper()
	if err := r.RegisterFiles(1); err != nil {
		t.Fatalf("RegisterFiles: %v", err)
	}
	if err := r.SetFile(0, fd); err != nil {
		t.Fatalf("SetFile: %v", err)
	}
}

// bufRing sets up r's provided-buffer ring group with n buffers of size bytes.
func bufRing(t *testing.T, r *Ring, group uint16, n, size int) *BufRing {
	t.Helper()
	b, err := r.NewBufRing(group, n, size)
	if err != nil {
		t.Fatalf("NewBufRing: %v", err)
	}
	return b
}

// collect takes the completions that are ready.
func collect(r *Ring) []CQE {
	a, b := r.Completions()
	cs := append(append([]CQE(nil), a...), b...)
	r.Seen(len(cs))
	return cs
}

// reap enters the ring until want completions arrived (or 2 s passed) and returns them.
func reap(t *testing.T, r *Ring, want int) []CQE {
	t.Helper()
	var got []CQE
	deadline := time.Now().Add(2 * time.Second)
	for len(got) < want && time.Now().Before(deadline) {
		if err := r.Wait(1, int64(50*time.Millisecond), len(got)%2 == 0); err != nil {
			t.Fatalf("Wait: %v", err)
		}
		got = append(got, collect(r)...)
	}
	if len(got) < want {
		t.Fatalf("got %d completions, want %d: %+v", len(got), want, got)
	}
	return got
}

func TestSendAndMultishotRecv(t *testing.T) {
	r := newRing(t, 8, 64)
	bufs := bufRing(t, r, 1, 4, 16)
	fd, peer := socketPair(t)
	if err := r.RegisterFiles(4); err != nil {
		t.Fatalf("RegisterFiles: %v", err)
	}
	if err := r.SetFile(3, fd); err != nil {
		t.Fatalf("SetFile: %v", err)
	}

	msg := []byte("GET / HTTP/1.1\r\n\r\n")
	if !r.Send(3, msg, 7) {
		t.Fatal("Send: queue full on an empty ring")
	}
	c := reap(t, r, 1)[0]
	if c.UserData != 7 || c.Res != int32(len(msg)) {
		t.Fatalf("send completion = %+v, want user data 7, res %d", c, len(msg))
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(peer, got); err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("peer read %q, %v; want %q", got, err, msg)
	}

	// Multishot receive: 40 bytes arrive in buffers of 16, across more completions than
	// there are buffers, so recycled buffers must be used again.
	if !r.RecvMultishot(3, bufs.Group(), 9) {
		t.Fatal("RecvMultishot: queue full")
	}
	var recvd []byte
	for i := 0; i < 4; i++ {
		if _, err := peer.Write(bytes.Repeat([]byte{byte('a' + i)}, 10)); err != nil {
			t.Fatal(err)
		}
		for want := (i + 1) * 10; len(recvd) < want; {
			for _, c := range reap(t, r, 1) {
				if c.UserData != 9 || c.Flags&FlagBuffer == 0 || c.Flags&FlagMore == 0 || c.Res <= 0 {
					t.Fatalf("recv completion = %+v, want user data 9, a buffer, more to come", c)
				}
				recvd = append(recvd, bufs.Bytes(c.BufferID(), int(c.Res))...)
				bufs.Recycle(c.BufferID())
			}
			bufs.Publish()
		}
	}
	want := "aaaaaaaaaabbbbbbbbbbccccccccccdddddddddd"
	if string(recvd) != want {
		t.Fatalf("received %q, want %q", recvd, want)
	}

	// The peer closes: the multishot receive ends with 0 and no FlagMore.
	peer.Close()
	c = reap(t, r, 1)[0]
	if c.UserData != 9 || c.Res != 0 || c.Flags&FlagMore != 0 {
		t.Fatalf("completion after the peer closed = %+v, want res 0 without FlagMore", c)
	}
}

func TestPollOnceAndFullQueue(t *testing.T) {
	r := newRing(t, 2, 8)
	fd, _ := socketPair(t)
	n := 0
	for r.PollOnce(fd, 0x4 /* POLLOUT */, uint64(n)) {
		n++
	}
	if n != 2 || !r.Full() || r.Pending() != 2 {
		t.Fatalf("queued %d polls (full %v, pending %d), want 2 on a ring of 2", n, r.Full(), r.Pending())
	}
	cs := reap(t, r, 2)
	for _, c := range cs {
		if c.Res&0x4 == 0 {
			t.Fatalf("poll completion = %+v, want POLLOUT ready", c)
		}
	}
	if r.Full() || r.Pending() != 0 {
		t.Fatalf("after Wait: full %v, pending %d; want an empty queue", r.Full(), r.Pending())
	}
}

func TestRecvWithoutBuffersEnds(t *testing.T) {
	r := newRing(t, 4, 16)
	bufs := bufRing(t, r, 2, 1, 8)
	fd, peer := socketPair(t)
	oneFile(t, r, fd)
	r.RecvMultishot(0, bufs.Group(), 1)
	if _, err := peer.Write([]byte("0123456789abcdef")); err != nil {
		t.Fatal(err)
	}
	// One buffer of 8 for 16 bytes: the first completion takes it, then the receive ends
	// with ENOBUFS (it must be asked again once buffers are back).
	cs := reap(t, r, 2)
	if cs[0].Res != 8 || cs[0].Flags&FlagBuffer == 0 {
		t.Fatalf("first completion = %+v, want 8 bytes in a buffer", cs[0])
	}
	if last := cs[len(cs)-1]; last.Res != -int32(syscall.ENOBUFS) || last.Flags&FlagMore != 0 {
		t.Fatalf("last completion = %+v, want -ENOBUFS without FlagMore", last)
	}
}

// TestRecvMsgMultishotStamps: a multishot recvmsg puts the control messages asked for (here a
// receive timestamp) and the data in each buffer, and Message splits them; the data are
// stamped with when they arrived, not when the ring handled them (the ring's work is deferred
// to its thread, so a wait for more completions than come sleeps through the arrival); the
// end of the stream is a buffer with no data and no FlagMore.
func TestRecvMsgMultishotStamps(t *testing.T) {
	r := newRing(t, 4, 16)
	bufs := bufRing(t, r, 3, 4, 256)
	fd, peer := socketPair(t)
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
		t.Fatal(err)
	}
	primeStamps(t, fd, peer)
	oneFile(t, r, fd)
	const control = 64
	msg := &unix.Msghdr{Controllen: control}
	r.RecvMsgMultishot(0, bufs.Group(), msg, 5)
	if err := r.Submit(); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	if _, err := peer.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	// Wait for 16 completions (more than will come) for 100 ms: the wait ends at its timeout,
	// and only then is the receive made. A signal may end a wait early with nothing ready;
	// it is made again for the rest of the time.
	for left := 100 * time.Millisecond; left > 0 && r.Ready() == 0; left = 100*time.Millisecond - time.Since(sent) {
		if err := r.Wait(16, int64(left), false); err != nil {
			t.Fatal(err)
		}
	}
	woke := time.Now()
	if d := woke.Sub(sent); d < 90*time.Millisecond {
		t.Fatalf("the wait for 16 completions ended after %v, want it to sleep through the arrival to its 100 ms", d)
	}
	cs := collect(r)
	if len(cs) != 1 || cs[0].UserData != 5 || cs[0].Flags&FlagBuffer == 0 || cs[0].Flags&FlagMore == 0 {
		t.Fatalf("completions = %+v, want one in a buffer, more to come", cs)
	}
	ctl, data, ok := Message(bufs.Bytes(cs[0].BufferID(), int(cs[0].Res)), control)
	if !ok || string(data) != "hello" {
		t.Fatalf("Message = %q, %v; want the data \"hello\"", data, ok)
	}
	stamp := stampOf(ctl)
	if stamp == 0 {
		t.Fatal("no SCM_TIMESTAMPNS in the control messages")
	}
	if at := time.Unix(0, stamp); at.Before(sent.Add(-time.Millisecond)) || at.After(sent.Add(50*time.Millisecond)) {
		t.Fatalf("stamped %v after the write, woke %v after it; want the arrival, right after the write", at.Sub(sent), woke.Sub(sent))
	}
	bufs.Recycle(cs[0].BufferID())
	bufs.Publish()

	peer.Close()
	c := reap(t, r, 1)[0]
	_, data, ok = Message(bufs.Bytes(c.BufferID(), int(c.Res)), control)
	if c.Flags&FlagMore != 0 || !ok || len(data) != 0 {
		t.Fatalf("completion after the peer closed = %+v (data %q), want an empty buffer without FlagMore", c, data)
	}
}

// stampOf returns the SCM_TIMESTAMPNS in control messages (0: none).
func stampOf(ctl []byte) int64 {
	msgs, err := unix.ParseSocketControlMessage(ctl)
	if err != nil {
		return 0
	}
	for _, m := range msgs {
		if m.Header.Level == syscall.SOL_SOCKET && m.Header.Type == unix.SCM_TIMESTAMPNS && len(m.Data) >= int(unsafe.Sizeof(unix.Timespec{})) {
			return (*unix.Timespec)(unsafe.Pointer(&m.Data[0])).Nano()
		}
	}
	return 0
}

// primeStamps waits until the kernel stamps what fd receives: it turns receive timestamps on
// some time after the first socket asks for them, so the first bytes may come unstamped.
func primeStamps(t *testing.T, fd int, peer net.Conn) {
	t.Helper()
	buf, oob := make([]byte, 16), make([]byte, 64)
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
		if _, err := peer.Write([]byte("p")); err != nil {
			t.Fatal(err)
		}
		for {
			n, oobn, _, _, err := unix.Recvmsg(fd, buf, oob, 0)
			if err == syscall.EAGAIN {
				time.Sleep(time.Millisecond)
				continue
			}
			if err != nil || n != 1 {
				t.Fatalf("priming read: %d bytes, %v", n, err)
			}
			if stampOf(oob[:oobn]) != 0 {
				return
			}
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the kernel did not stamp received bytes within 2s of SO_TIMESTAMPNS")
}
