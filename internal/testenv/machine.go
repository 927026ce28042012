package testenv

import (
	"testing"

	"github.com/apiperf/apiperf/procfs"
)

// stolenShare is the share of the machine's CPU a hypervisor may take during a timing test
// before its microsecond bounds say more about the host than about the code: a vCPU taken away
// for milliseconds at a time makes a request sent on time look late.
const stolenShare = 0.01

// WatchMachine starts watching the machine's CPU; the function it returns gives the use since
// then, and whether a hypervisor took more than stolenShare of it (steal), so that a timing test
// can say its bounds were not judged instead of failing on the host's doing.
func WatchMachine(t testing.TB) func() (use procfs.MachineUse, stolen bool) {
	t.Helper()
	first, err := procfs.ReadMachine()
	if err != nil {
		t.Logf("machine CPU not watched: %v", err)
		return func() (procfs.MachineUse, bool) { return procfs.MachineUse{}, false }
	}
	return func() (procfs.MachineUse, bool) {
		now, err := procfs.ReadMachine()
		if err != nil {
			return procfs.MachineUse{}, false
		}
		use := now.Since(first)
		return use, use.StealShare() > stolenShare
	}
}
