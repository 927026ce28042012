package procfs

import (
	"os"
	"testing"
)

// TestReadsAllocateLittle: the readings taken every second of every step (the machine's CPU,
// apiperf's and the target's process) allocate at most a path per file opened (the system
// call's copy of it), so a long run's memory stays flat: they made 76 allocations and about
// 16 KB a second, most of a soak's garbage.
func TestReadsAllocateLittle(t *testing.T) {
	pid := os.Getpid()
	threads, err := eachEntry(procPath(make([]byte, 0, 64), pid, "/task"), make([]byte, 4096), func([]byte) bool { return true })
	if err != nil || threads == 0 {
		t.Fatalf("listing this process's threads: %d, %v", threads, err)
	}
	for _, c := range []struct {
		name string
		f    func()
		most float64
	}{
		{"ReadMachine", func() { ReadMachine() }, 2},
		{"ReadSched", func() { ReadSched(pid) }, float64(threads) + 3},
		{"Read", func() { Read(pid) }, float64(threads) + 5},
	} {
		if n := testing.AllocsPerRun(20, c.f); n > c.most {
			t.Errorf("%s: %.0f allocations a reading, want at most %.0f (%d threads)", c.name, n, c.most, threads)
		}
	}
	if _, err := Read(pid); err != nil {
		t.Fatal(err)
	}
}

// TestField: the field reader splits as strings.Fields does on /proc's separators.
func TestField(t *testing.T) {
	b := []byte("  12 34\t56\n 7 ")
	for i, want := range []string{"12", "34", "56", "7", ""} {
		if got := string(field(b, i)); got != want {
			t.Errorf("field %d = %q, want %q", i, got, want)
		}
	}
	if n := countFields(b); n != 4 {
		t.Errorf("countFields = %d, want 4", n)
	}
}

// TestScanHoldersAllocatesLittle: the walk of every process's open files that finds the
// target's process allocates a path per directory opened (the system call's copy of it), not
// per open file: it made about 300 bytes of garbage per open file of the machine.
func TestScanHoldersAllocatesLittle(t *testing.T) {
	procs, files := 0, 0
	scratch := make([]byte, 4096)
	eachEntry("/proc", make([]byte, 4096), func(name []byte) bool {
		if _, err := decInt(name); err == nil {
			procs++
			n, _ := eachEntry("/proc/"+string(name)+"/fd", scratch, func([]byte) bool { return true })
			files += n
		}
		return true
	})
	want := map[uint64]listener{1: {}} // no socket has inode 1: every link is read
	n := testing.AllocsPerRun(5, func() { scanHolders("/proc", want, func(int, uint64) bool { return true }) })
	// Processes come and go while it runs, each at most a path (the directory's and, for the
	// unreadable, its error).
	t.Logf("scanHolders: %.0f allocations a walk (%d processes, %d open files)", n, procs, files)
	if most := float64(procs)*1.5 + 10; n > most {
		t.Errorf("scanHolders: %.0f allocations a walk, want at most %.0f (%d processes, %d open files)", n, most, procs, files)
	}
}
