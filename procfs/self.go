package procfs

import (
	"bytes"
	"errors"
	"os"
	"strconv"
)

// SelfStat is what /proc/self/stat says of this process, in the kernel's units: CPU times
// and the start (since boot) in clock ticks (USER_HZ), the virtual size in bytes and the
// resident set in pages.
type SelfStat struct {
	UTime, STime, Start, VSize, RSSPages uint64
}

// ReadSelfStat reads /proc/self/stat: the fields after the command name (which may hold
// spaces and parentheses, so the last ')' ends it), numbered from 3 (state) as in proc(5).
func ReadSelfStat() (SelfStat, error) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return SelfStat{}, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return SelfStat{}, errors.New("/proc/self/stat: no command name")
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 22 {
		return SelfStat{}, errors.New("/proc/self/stat: too few fields")
	}
	var st SelfStat
	for _, v := range []struct {
		field int // as numbered in proc(5)
		to    *uint64
	}{{14, &st.UTime}, {15, &st.STime}, {22, &st.Start}, {23, &st.VSize}, {24, &st.RSSPages}} {
		n, err := strconv.ParseUint(string(f[v.field-3]), 10, 64)
		if err != nil {
			return SelfStat{}, errors.New("/proc/self/stat: field " + strconv.Itoa(v.field) + ": " + err.Error())
		}
		*v.to = n
	}
	return st, nil
}

// BootTime is the system's boot time in seconds since the epoch (btime in /proc/stat).
func BootTime() (uint64, error) {
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

// SelfOpenFDs counts this process's open file descriptors: the entries of /proc/self/fd,
// the directory's own descriptor excluded.
func SelfOpenFDs() (int, error) {
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return 0, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	return len(names) - 1, err
}
