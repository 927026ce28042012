package procfs

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// unlimitedMemory is where cgroup v1 memory limits stop being limits: v1 writes "no limit"
// as the largest page-aligned int64 (9223372036854771712).
const unlimitedMemory = 1 << 60

// MemoryLimit is the memory limit of process pid's cgroup in bytes (cgroup v2 memory.max,
// or v1 memory.limit_in_bytes), the tightest along its path to the root of the hierarchy;
// 0 when it has none or it cannot be read. A Kubernetes memory limit is one.
func MemoryLimit(pid int) int64 { return memoryLimit("/", pid) }

// memoryLimit is MemoryLimit with /proc and /sys/fs/cgroup under root.
func memoryLimit(root string, pid int) int64 {
	return int64(tightest(root, pid, "memory", bytesIn("memory.max"), bytesIn("memory.limit_in_bytes")))
}

// bytesIn reads a byte count from the named file of a cgroup directory; 0 for "max", a
// value that means no limit, or a file that cannot be read.
func bytesIn(name string) func(dir string) float64 {
	return func(dir string) float64 {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return 0
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || v <= 0 || v >= unlimitedMemory {
			return 0
		}
		return float64(v)
	}
}
