package exposition

import (
	"os"
	"syscall"

	"github.com/apiperf/apiperf/procfs"
)

// userHZ is the unit of the CPU times in /proc/PID/stat (USER_HZ, 100 on every Linux ABI Go
// supports).
const userHZ = 100

// WriteProcess writes the process_* metrics of this process (CPU seconds, resident and
// virtual memory, file descriptors, start time), read from /proc, under the names the
// Prometheus client library uses. A value that cannot be read is left out.
func WriteProcess(p *Page) {
	st, stErr := procfs.ReadSelfStat()
	if stErr == nil {
		p.Metric("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", "counter", float64(st.UTime+st.STime)/userHZ)
	}
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil {
		p.Metric("process_max_fds", "Maximum number of open file descriptors.", "gauge", float64(lim.Cur))
	}
	if n, err := procfs.SelfOpenFDs(); err == nil {
		p.Metric("process_open_fds", "Number of open file descriptors.", "gauge", float64(n))
	}
	if stErr != nil {
		return
	}
	p.Metric("process_resident_memory_bytes", "Resident memory size in bytes.", "gauge", float64(st.RSSPages*uint64(os.Getpagesize())))
	if boot, err := procfs.BootTime(); err == nil {
		p.Metric("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", "gauge", float64(boot)+float64(st.Start)/userHZ)
	}
	p.Metric("process_virtual_memory_bytes", "Virtual memory size in bytes.", "gauge", float64(st.VSize))
}
