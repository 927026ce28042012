//go:build linux

package load

import (
	"os"
	"runtime"

	"github.com/apiperf/apiperf/procfs"
)

// servedHere reports whether this process listens on TCP port: the target then runs in the
// run's own process (tests, `apiperf sweep` of the built-in target), and its goroutines need
// the Go scheduler's network poller, which the event loops' raw waits would keep off the
// thread (see rawBlock, keepP). It reads /proc; when it cannot, it says yes, the safe answer.
func servedHere(port int) bool {
	ok, err := procfs.Serves(os.Getpid(), uint16(port))
	return ok || err != nil
}

// keepP reports whether the run's event loops may wait keeping their threads' Ps (raw
// waits, see rawBlock): when GOMAXPROCS leaves a P beyond the loops', which runs the network
// poller, or when the target is not served by this process. Otherwise a loop that kept its
// P would keep the target's goroutines off the CPUs until the runtime preempted it (a closed
// loop on io_uring ran 17 times slower on two threads than on one at GOMAXPROCS=2).
func keepP(loops []*evloop) bool {
	return runtime.GOMAXPROCS(0) > len(loops) || !servedHere(sockPort(loops[0].sa))
}
