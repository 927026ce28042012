package procfs

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestExecutableBuildEnv reads this test binary's own process: its executable, Go build and
// environment as it started.
func TestExecutableBuildEnv(t *testing.T) {
	pid := os.Getpid()
	want, err := os.Executable()
	if err != nil {
		t.Skipf("os.Executable: %v", err)
	}
	if got, err := Executable(pid); err != nil || got != want {
		t.Errorf("Executable(self) = %q, %v; want %q", got, err, want)
	}
	if bi, err := BuildInfo(pid); err != nil || bi.GoVersion != runtime.Version() {
		t.Errorf("BuildInfo(self) = %+v, %v; want Go %s", bi, err, runtime.Version())
	}
	if _, err := Executable(1 << 30); err == nil {
		t.Errorf("Executable(no such process) succeeded; want an error")
	}
	path := os.Getenv("PATH")
	for _, c := range []struct {
		name, want string
		ok         bool
	}{
		{"PATH", path, path != ""}, // set when the test started
		{"PAT", "", false},         // a prefix of a name is not the name
		{"APIPERF_NO_SUCH_VARIABLE", "", false},
	} {
		if got, ok := Getenv(pid, c.name); got != c.want || ok != c.ok {
			t.Errorf("Getenv(self, %q) = %q, %v; want %q, %v", c.name, got, ok, c.want, c.ok)
		}
	}
	if _, ok := Getenv(1<<30, "PATH"); ok {
		t.Errorf("Getenv(no such process) ok; want not")
	}
}

// TestSelf reads this process's own figures for its process_* metrics and the port range.
func TestSelf(t *testing.T) {
	st, err := ReadSelfStat()
	if err != nil || st.VSize == 0 || st.RSSPages == 0 {
		t.Errorf("ReadSelfStat() = %+v, %v; want a virtual size and resident pages", st, err)
	}
	boot, err := BootTime()
	if now := uint64(time.Now().Unix()); err != nil || boot < 1e9 || boot > now {
		t.Errorf("BootTime() = %d, %v; want a time before now (%d)", boot, err, now)
	}
	if n, err := SelfOpenFDs(); err != nil || n < 3 {
		t.Errorf("SelfOpenFDs() = %d, %v; want at least stdin, stdout and stderr", n, err)
	}
	if r, err := LocalPortRange(); err != nil || len(strings.Fields(r)) != 2 {
		t.Errorf("LocalPortRange() = %q, %v; want two ports", r, err)
	}
}
