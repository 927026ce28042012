//go:build linux

package load

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// servedHere reports whether this process listens on TCP port: the target then runs in the
// run's own process (tests, `apiperf sweep` of the built-in target), and its goroutines need
// the Go scheduler's network poller, which the open loop's short waits would keep off the
// thread (see rawBlock). It reads /proc; when it cannot, it says yes, the safe answer.
func servedHere(port int) bool {
	inodes := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		listeners(f, port, inodes)
	}
	if len(inodes) == 0 {
		return false // nobody listens there: nothing of this process to starve
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return true
	}
	for _, fd := range fds {
		l, err := os.Readlink("/proc/self/fd/" + fd.Name())
		if err == nil && strings.HasPrefix(l, "socket:[") && inodes[strings.TrimSuffix(l[len("socket:["):], "]")] {
			return true
		}
	}
	return false
}

// listeners adds the inodes of the sockets listening on port in file (/proc/net/tcp's format).
func listeners(file string, port int, inodes map[string]bool) {
	f, err := os.Open(file)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || fields[3] != "0A" { // 0A: TCP_LISTEN
			continue
		}
		_, hexPort, ok := strings.Cut(fields[1], ":")
		if p, err := strconv.ParseUint(hexPort, 16, 16); ok && err == nil && int(p) == port {
			inodes[fields[9]] = true
		}
	}
}
