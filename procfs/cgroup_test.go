package procfs

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCPULimit(t *testing.T) {
	tests := []struct {
		name   string
		cgroup string            // /proc/1/cgroup
		files  map[string]string // under sys/fs/cgroup
		want   float64
	}{
		// v2: the tightest limit along the path, here the parent's 1.5 cores.
		{"v2 parent", "0::/pod/app\n", map[string]string{"pod/app/cpu.max": "max 100000", "pod/cpu.max": "150000 100000"}, 1.5},
		// v2 without any limit.
		{"v2 unlimited", "0::/app\n", map[string]string{"app/cpu.max": "max 100000"}, 0},
		// v2 inside a container without a cgroup namespace: the path is the host's, the
		// mount is the container's own cgroup, whose cpu.max is at the mount's root.
		{"v2 container", "0::/kubepods/burstable/pod1/c1\n", map[string]string{"cpu.max": "200000 100000"}, 2},
		// v1 with cpu,cpuacct mounted together: 0.5 cores.
		{"v1", "4:memory:/x\n2:cpu,cpuacct:/x\n", map[string]string{"cpu,cpuacct/x/cpu.cfs_quota_us": "50000\n", "cpu,cpuacct/x/cpu.cfs_period_us": "100000\n"}, 0.5},
		// v1 with no quota (-1), as on this machine.
		{"v1 unlimited", "1:cpu:/\n", map[string]string{"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, 0},
		// No cgroup file at all.
		{"unreadable", "", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := fakeTree(t, tt.cgroup, tt.files)
			if got := cpuLimit(root, 1); got != tt.want {
				t.Errorf("cpuLimit with %q and %v = %v, want %v", tt.cgroup, tt.files, got, tt.want)
			}
		})
	}
}

func write(t *testing.T, name, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestMemoryLimit(t *testing.T) {
	tests := []struct {
		name   string
		cgroup string            // /proc/1/cgroup
		files  map[string]string // under sys/fs/cgroup
		want   int64
	}{
		// v2: the tightest along the path, here the pod's 512 MiB under the app's "max".
		{"v2 parent", "0::/pod/app\n", map[string]string{"pod/app/memory.max": "max\n", "pod/memory.max": "536870912\n"}, 512 << 20},
		// v2 without a limit anywhere.
		{"v2 unlimited", "0::/app\n", map[string]string{"app/memory.max": "max\n"}, 0},
		// v1: 1 GiB on the memory controller's path.
		{"v1", "4:memory:/x\n2:cpu,cpuacct:/x\n", map[string]string{"memory/x/memory.limit_in_bytes": "1073741824\n"}, 1 << 30},
		// v1's "no limit" is the largest page-aligned int64, as on this machine.
		{"v1 unlimited", "4:memory:/x\n", map[string]string{"memory/x/memory.limit_in_bytes": "9223372036854771712\n"}, 0},
		// No cgroup file at all.
		{"unreadable", "", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := fakeTree(t, tt.cgroup, tt.files)
			if got := memoryLimit(root, 1); got != tt.want {
				t.Errorf("memoryLimit with %q and %v = %d, want %d", tt.cgroup, tt.files, got, tt.want)
			}
		})
	}
}

// fakeTree makes a /proc/1/cgroup holding cgroup (none when empty) and files under
// /sys/fs/cgroup, in a temporary root.
func fakeTree(t *testing.T, cgroup string, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	if cgroup != "" {
		write(t, filepath.Join(root, "proc", "1", "cgroup"), cgroup)
	}
	for name, body := range files {
		write(t, filepath.Join(root, "sys", "fs", "cgroup", name), body)
	}
	return root
}
