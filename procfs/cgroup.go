package procfs

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// CPULimit is the CPU bandwidth limit of process pid's cgroup in cores (cgroup v2 cpu.max,
// or v1 cpu.cfs_quota_us over cpu.cfs_period_us), the tightest along its path to the root
// of the hierarchy; 0 when it has none or it cannot be read. A Kubernetes CPU limit is one.
func CPULimit(pid int) float64 { return cpuLimit("/", pid) }

// cpuLimit is CPULimit with /proc and /sys/fs/cgroup under root (tests give a fake tree).
func cpuLimit(root string, pid int) float64 {
	return tightest(root, pid, "cpu", cpuMax, cfsQuota)
}

// tightest is the smallest positive limit along process pid's cgroup paths to the root of
// each hierarchy, read by v2 from a cgroup v2 directory and by v1 from a directory of v1's
// controller; 0 when none has a limit or /proc/PID/cgroup cannot be read.
func tightest(root string, pid int, controller string, v2, v1 func(dir string) float64) float64 {
	b, err := os.ReadFile(filepath.Join(root, "proc", strconv.Itoa(pid), "cgroup"))
	if err != nil {
		return 0
	}
	limit := 0.0
	tighter := func(v float64) {
		if v > 0 && (limit == 0 || v < limit) {
			limit = v
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		// hierarchy-ID:controllers:path; v2 is "0::path", v1 names its controllers.
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		switch {
		case f[0] == "0" && f[1] == "":
			for _, mount := range []string{"sys/fs/cgroup", "sys/fs/cgroup/unified"} {
				walkUp(filepath.Join(root, mount), f[2], func(dir string) { tighter(v2(dir)) })
			}
		case hasController(f[1], controller):
			for _, mount := range []string{"sys/fs/cgroup/" + f[1], "sys/fs/cgroup/" + controller} {
				walkUp(filepath.Join(root, mount), f[2], func(dir string) { tighter(v1(dir)) })
			}
		}
	}
	return limit
}

// walkUp calls f for the cgroup p under mount and each of its parents up to the mount
// itself. Inside a container the path may name the host's hierarchy while the mount is the
// container's own cgroup: directories that do not exist are skipped.
func walkUp(mount, p string, f func(dir string)) {
	for p = path.Clean("/" + p); ; p = path.Dir(p) {
		if dir := filepath.Join(mount, filepath.FromSlash(p)); isDir(dir) {
			f(dir)
		}
		if p == "/" {
			return
		}
	}
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

func hasController(list, c string) bool {
	for _, x := range strings.Split(list, ",") {
		if x == c {
			return true
		}
	}
	return false
}

// cpuMax reads a v2 cpu.max, "QUOTA PERIOD" or "max PERIOD", in cores; 0 without a limit.
func cpuMax(dir string) float64 {
	b, err := os.ReadFile(filepath.Join(dir, "cpu.max"))
	if err != nil {
		return 0
	}
	var quota string
	var period float64
	if n, _ := fmt.Sscan(string(b), &quota, &period); n != 2 || quota == "max" || period <= 0 {
		return 0
	}
	q, err := strconv.ParseFloat(quota, 64)
	if err != nil || q <= 0 {
		return 0
	}
	return q / period
}

// cfsQuota reads v1's cpu.cfs_quota_us (-1: no limit) and cpu.cfs_period_us, in cores.
func cfsQuota(dir string) float64 {
	read := func(name string) float64 {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return 0
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
		if err != nil {
			return 0
		}
		return v
	}
	q, p := read("cpu.cfs_quota_us"), read("cpu.cfs_period_us")
	if q <= 0 || p <= 0 {
		return 0
	}
	return q / p
}
