//go:build linux

package load

import (
	"os"

	"github.com/apiperf/apiperf/procfs"
)

// servedHere reports whether this process listens on TCP port: the target then runs in the
// run's own process (tests, `apiperf sweep` of the built-in target), and its goroutines need
// the Go scheduler's network poller, which the open loop's short waits would keep off the
// thread (see rawBlock). It reads /proc; when it cannot, it says yes, the safe answer.
func servedHere(port int) bool {
	ok, err := procfs.Serves(os.Getpid(), uint16(port))
	return ok || err != nil
}
