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
	threads, err := eachTask(procPath(make([]byte, 0, 64), pid, "/task"), make([]byte, 4096), func([]byte) bool { return true })
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
