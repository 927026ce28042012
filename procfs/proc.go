// Package procfs reads a process's use of the machine from Linux's /proc: CPU time, resident
// memory, the time its threads waited for a CPU, and the CPUs it may run on. It works for
// any process, Go or not: the target of --target-pid, and apiperf itself. It also reads the
// whole machine's CPU (/proc/stat: what every other process took), finds the process
// listening on a loopback port (/proc/net/tcp and the sockets in /proc/PID/fd), and reads
// what else apiperf asks of /proc: a process's executable, Go build and environment (exe.go),
// the local port range, and this process's own figures for its process_* metrics (self.go).
package procfs

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unsafe"
)

// clockTicks is USER_HZ, the unit of CPU times in /proc/PID/stat (100 on every Linux port).
const clockTicks = 100

// Stat is one reading of a process: CPU time used since it started and resident memory now.
type Stat struct {
	CPU      time.Duration
	RSSBytes int64
	// RunWait is how long the process's threads have waited on a run queue for a CPU
	// (Sched's Wait); 0 when not available.
	RunWait time.Duration
}

// Read reads the CPU time (user + system) and the resident set size of process pid from
// /proc/PID/stat and /proc/PID/statm, and its threads' run-queue wait.
func Read(pid int) (Stat, error) {
	sc := getScratch()
	defer putScratch(sc)
	buf, name := sc.data[:4096], sc.path[:0]
	b, err := readSmall(procPath(name, pid, "/stat"), buf)
	if err != nil {
		return Stat{}, fmt.Errorf("reading process %d: %w", pid, err)
	}
	// The command name (field 2) is in parentheses and may hold spaces: fields start after ") ".
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return Stat{}, fmt.Errorf("reading process %d: malformed stat %q", pid, snippet(b))
	}
	rest := b[i+1:]
	// Field 0 of rest is field 3 (state); utime and stime are fields 14 and 15.
	if n := countFields(rest); n < 13 {
		return Stat{}, fmt.Errorf("reading process %d: stat has %d fields", pid, n+2)
	}
	ut, st := field(rest, 11), field(rest, 12)
	utime, err1 := decInt(ut)
	stime, err2 := decInt(st)
	if err1 != nil || err2 != nil {
		return Stat{}, fmt.Errorf("reading process %d: bad CPU times %q %q", pid, ut, st)
	}
	m, err := readSmall(procPath(name, pid, "/statm"), buf)
	if err != nil {
		return Stat{}, fmt.Errorf("reading process %d: %w", pid, err)
	}
	res := field(m, 1)
	if res == nil {
		return Stat{}, fmt.Errorf("reading process %d: malformed statm %q", pid, snippet(m))
	}
	pages, err := decInt(res)
	if err != nil {
		return Stat{}, fmt.Errorf("reading process %d: bad resident size %q", pid, res)
	}
	sched, _ := ReadSched(pid)
	return Stat{
		CPU:      time.Duration(utime+stime) * (time.Second / clockTicks),
		RSSBytes: pages * int64(os.Getpagesize()),
		RunWait:  sched.Wait,
	}, nil
}

// Cores is how many CPUs process pid may run on (its affinity, /proc/PID/status
// Cpus_allowed_list), or 0 when that cannot be read.
func Cores(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return countCPUList(strings.TrimSpace(v))
		}
	}
	return 0
}

// countCPUList counts the CPUs of a list such as "0-3,6,8-9".
func countCPUList(s string) int {
	n := 0
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return 0
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return 0
			}
		}
		n += b - a + 1
	}
	return n
}

// snippet is the first line of b, printable and short, for an error message.
func snippet(b []byte) string {
	line, _, _ := strings.Cut(string(b[:min(len(b), 512)]), "\n")
	s := strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return -1
	}, strings.TrimSpace(line))
	if r := []rune(s); len(r) > 120 {
		s = string(r[:120]) + "..."
	}
	return s
}

// procPath is "/proc/PID" + tail, made in dst's array: a string that lives as long as dst is
// not reused, for a path opened at once.
func procPath(dst []byte, pid int, tail string) string {
	dst = append(dst, "/proc/"...)
	dst = strconv.AppendInt(dst, int64(pid), 10)
	dst = append(dst, tail...)
	return unsafe.String(unsafe.SliceData(dst), len(dst))
}
