package conditions

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/apiperf/apiperf/procfs"
)

// ReadGenerator reads the machine apiperf runs on: its CPU, kernel, governor, apiperf's
// cgroup limits and the load average. version is apiperf's version; threads the engine
// threads (-t). What is not readable (no /proc, no cpufreq) is left empty.
func ReadGenerator(version string, threads int) Generator {
	pid := os.Getpid()
	g := Generator{
		Apiperf: version, GoVersion: runtime.Version(), Arch: runtime.GOOS + "/" + runtime.GOARCH,
		GOMAXPROCS: runtime.GOMAXPROCS(0), Threads: threads,
		CPUModel: cpuModel(), CPUs: onlineCPUs(), Governor: governor(), Kernel: firstLine("/proc/sys/kernel/osrelease"),
		CPULimit: procfs.CPULimit(pid), MemoryLimit: procfs.MemoryLimit(pid), Load: loadAverage(),
	}
	return g
}

// cpuModel is the CPU's name from /proc/cpuinfo: "model name" (x86), else what ARM and
// other ports print ("Model", "Hardware", "cpu", "uarch").
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	found := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if _, seen := found[k]; !seen && v != "" {
			found[k] = v
		}
	}
	for _, k := range []string{"model name", "Model", "Hardware", "cpu", "uarch"} {
		if v := found[k]; v != "" {
			return v
		}
	}
	return ""
}

// onlineCPUs counts the logical CPUs online (the cpuN lines of /proc/stat), whatever
// apiperf's own affinity; runtime.NumCPU where /proc is not readable.
func onlineCPUs() int {
	if m, err := procfs.ReadMachine(); err == nil && m.CPUs > 0 {
		return m.CPUs
	}
	return runtime.NumCPU()
}

// governor is the CPU frequency governors in use, e.g. "performance" or
// "powersave,performance" when CPUs differ; "" where cpufreq is not exposed.
func governor() string {
	files, _ := filepath.Glob("/sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor")
	var gs []string
	for _, f := range files {
		if g := firstLine(f); g != "" && !slices.Contains(gs, g) {
			gs = append(gs, g)
		}
	}
	slices.Sort(gs)
	return strings.Join(gs, ",")
}

// loadAverage reads /proc/loadavg's three averages.
func loadAverage() [3]float64 {
	var l [3]float64
	f := strings.Fields(firstLine("/proc/loadavg"))
	for i := 0; i < 3 && i < len(f); i++ {
		l[i], _ = strconv.ParseFloat(f[i], 64)
	}
	return l
}

// firstLine is the first line of a small file, trimmed; "" when it cannot be read.
func firstLine(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(line)
}
