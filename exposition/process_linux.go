package exposition

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
)

// userHZ is the unit of the CPU times in /proc/PID/stat (USER_HZ, 100 on every Linux ABI Go
// supports).
const userHZ = 100

// WriteProcess writes the process_* metrics of this process (CPU seconds, resident and
// virtual memory, file descriptors, start time), read from /proc, under the names the
// Prometheus client library uses. A value that cannot be read is left out.
func WriteProcess(p *Page) {
	st, stErr := readStat()
	if stErr == nil {
		p.Metric("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", "counter", float64(st.utime+st.stime)/userHZ)
	}
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil {
		p.Metric("process_max_fds", "Maximum number of open file descriptors.", "gauge", float64(lim.Cur))
	}
	if n, err := openFDs(); err == nil {
		p.Metric("process_open_fds", "Number of open file descriptors.", "gauge", float64(n))
	}
	if stErr != nil {
		return
	}
	p.Metric("process_resident_memory_bytes", "Resident memory size in bytes.", "gauge", float64(st.rss*uint64(os.Getpagesize())))
	if boot, err := bootTime(); err == nil {
		p.Metric("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", "gauge", float64(boot)+float64(st.start)/userHZ)
	}
	p.Metric("process_virtual_memory_bytes", "Virtual memory size in bytes.", "gauge", float64(st.vsize))
}

// procStat is what WriteProcess reads of /proc/self/stat.
type procStat struct {
	utime, stime, start, vsize, rss uint64
}

// readStat reads /proc/self/stat: the fields after the command name (which may hold spaces
// and parentheses, so the last ')' ends it), numbered from 3 (state) as in proc(5).
func readStat() (procStat, error) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return procStat{}, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, errors.New("/proc/self/stat: no command name")
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 22 {
		return procStat{}, errors.New("/proc/self/stat: too few fields")
	}
	var st procStat
	for _, v := range []struct {
		field int // as numbered in proc(5)
		to    *uint64
	}{{14, &st.utime}, {15, &st.stime}, {22, &st.start}, {23, &st.vsize}, {24, &st.rss}} {
		n, err := strconv.ParseUint(string(f[v.field-3]), 10, 64)
		if err != nil {
			return procStat{}, errors.New("/proc/self/stat: field " + strconv.Itoa(v.field) + ": " + err.Error())
		}
		*v.to = n
	}
	return st, nil
}

// bootTime is the system's boot time in seconds since the epoch (btime in /proc/stat).
func bootTime() (uint64, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("btime ")); ok {
			return strconv.ParseUint(string(bytes.TrimSpace(v)), 10, 64)
		}
	}
	return 0, errors.New("/proc/stat: no btime")
}

// openFDs counts the entries of /proc/self/fd (the directory's own descriptor excluded).
func openFDs() (int, error) {
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return 0, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	return len(names) - 1, err
}
