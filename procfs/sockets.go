package procfs

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"net/netip"
	"os"
	"strconv"
	"strings"
)

// Socket is one TCP socket of /proc/net/tcp or tcp6.
type Socket struct {
	Local, Remote netip.AddrPort
	State         uint8 // the kernel's TCP state: TCPEstablished, TCPListen, ...
	UID           uint32
	Inode         uint64
}

// TCP states as /proc/net/tcp numbers them.
const (
	TCPEstablished = 0x01
	TCPTimeWait    = 0x06
	TCPListen      = 0x0A
)

// Sockets calls f for every TCP socket, IPv4 then IPv6, of the tables dir/net/tcp and
// dir/net/tcp6: dir "/proc" is this process's network namespace, "/proc/PID" that of
// process PID. It is the one reader of those tables: it goes line by line through one
// small buffer and allocates nothing per line, so a machine holding a hundred thousand
// sockets in TIME_WAIT (a load generator's, after a few runs) costs it no more memory than
// one holding ten (a line is about 150 bytes; the buffer holds 4 KiB). A missing table (no IPv6) is skipped; malformed lines are skipped.
func Sockets(dir string, f func(Socket)) error {
	var buf *bufio.Reader
	for _, name := range []string{"/net/tcp", "/net/tcp6"} {
		file, err := os.Open(dir + name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if buf == nil {
			buf = bufio.NewReaderSize(file, 4<<10)
		} else {
			buf.Reset(file)
		}
		err = eachSocket(buf, f)
		file.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// eachSocket calls f for each well-formed line of a /proc/net/tcp text after its header.
func eachSocket(r *bufio.Reader, f func(Socket)) error {
	header := true
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			for errors.Is(err, bufio.ErrBufferFull) { // no such line in the kernel's format: skip it
				_, err = r.ReadSlice('\n')
			}
			continue
		}
		if len(line) > 0 && !header {
			if s, ok := parseSocket(line); ok {
				f(s)
			}
		}
		header = false
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// parseSocket reads one line: "sl local rem st tx:rx tr:when retrnsmt uid timeout inode ...".
func parseSocket(line []byte) (Socket, bool) {
	var f [10][]byte
	n := 0
	for rest := line; n < len(f); n++ {
		rest = bytes.TrimLeft(rest, " \t")
		end := bytes.IndexAny(rest, " \t\n")
		if end < 0 {
			end = len(rest)
		}
		if end == 0 {
			break
		}
		f[n], rest = rest[:end], rest[end:]
	}
	if n < len(f) {
		return Socket{}, false
	}
	la, lok := parseSockAddr(f[1])
	ra, rok := parseSockAddr(f[2])
	st, sok := hexUint(f[3], 8)
	uid, uok := decUint(f[7], 32)
	inode, iok := decUint(f[9], 64)
	if !lok || !rok || !sok || !uok || !iok {
		return Socket{}, false
	}
	return Socket{Local: la, Remote: ra, State: uint8(st), UID: uint32(uid), Inode: inode}, true
}

// parseSockAddr reads "0100007F:1F90": the address as the kernel's 32-bit words in host byte
// order (little-endian on the machines this runs on), then the port in hex.
func parseSockAddr(s []byte) (netip.AddrPort, bool) {
	colon := bytes.IndexByte(s, ':')
	if colon < 0 || (colon != 8 && colon != 32) {
		return netip.AddrPort{}, false
	}
	port, ok := hexUint(s[colon+1:], 16)
	if !ok {
		return netip.AddrPort{}, false
	}
	var raw [16]byte
	for i := 0; i < colon/2; i++ {
		v, ok := hexUint(s[2*i:2*i+2], 8)
		if !ok {
			return netip.AddrPort{}, false
		}
		w := i &^ 3 // each 32-bit word is in host (little-endian) order
		raw[w+3-(i&3)] = byte(v)
	}
	var a netip.Addr
	if colon == 8 {
		a = netip.AddrFrom4([4]byte(raw[:4]))
	} else {
		a = netip.AddrFrom16(raw)
	}
	return netip.AddrPortFrom(a, uint16(port)), true
}

// hexUint and decUint parse a field without allocating (strconv takes a string; the
// conversion of a short byte slice in the call does not escape).
func hexUint(b []byte, bits int) (uint64, bool) {
	v, err := strconv.ParseUint(string(b), 16, bits)
	return v, err == nil
}

func decUint(b []byte, bits int) (uint64, bool) {
	v, err := strconv.ParseUint(string(b), 10, bits)
	return v, err == nil
}

// socketInodes returns the inodes of the sockets among the open files of the process
// directory dir (/proc/PID): its fd links read "socket:[INODE]".
func socketInodes(dir string) (map[uint64]bool, error) {
	fds, err := os.ReadDir(dir + "/fd")
	if err != nil {
		return nil, err
	}
	mine := map[uint64]bool{}
	for _, fd := range fds {
		if link, err := os.Readlink(dir + "/fd/" + fd.Name()); err == nil {
			if inode, ok := socketInode(link); ok {
				mine[inode] = true
			}
		}
	}
	return mine, nil
}

// socketInode reads an fd link "socket:[INODE]".
func socketInode(link string) (uint64, bool) {
	s, ok := strings.CutPrefix(link, "socket:[")
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseUint(strings.TrimSuffix(s, "]"), 10, 64)
	return v, err == nil
}

// Serves reports whether process pid holds a TCP socket listening on port (on any
// address); the error says why it could not be read.
func Serves(pid int, port uint16) (bool, error) {
	dir := "/proc/" + strconv.Itoa(pid)
	var listening []uint64
	if err := Sockets(dir, func(s Socket) {
		if s.State == TCPListen && s.Local.Port() == port {
			listening = append(listening, s.Inode)
		}
	}); err != nil {
		return false, err
	}
	if len(listening) == 0 {
		return false, nil
	}
	mine, err := socketInodes(dir)
	if err != nil {
		return false, err
	}
	for _, in := range listening {
		if mine[in] {
			return true, nil
		}
	}
	return false, nil
}

// PortsToward counts, per local address, the sockets of this network namespace whose remote
// end is target: open connections and those in TIME_WAIT, each holding a local port.
func PortsToward(target netip.AddrPort) (map[netip.Addr]int, error) {
	used := map[netip.Addr]int{}
	target = netip.AddrPortFrom(target.Addr().Unmap(), target.Port())
	err := Sockets("/proc", func(s Socket) {
		if netip.AddrPortFrom(s.Remote.Addr().Unmap(), s.Remote.Port()) == target {
			used[s.Local.Addr().Unmap()]++
		}
	})
	return used, err
}
