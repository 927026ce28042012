package procfs

import (
	"bytes"
	"debug/buildinfo"
	"fmt"
	"os"
	"runtime/debug"
)

// exePath is /proc/PID/exe: the file process pid runs, even if replaced or deleted since.
func exePath(pid int) string { return fmt.Sprintf("/proc/%d/exe", pid) }

// Executable is the path of the file process pid runs.
func Executable(pid int) (string, error) { return os.Readlink(exePath(pid)) }

// BuildInfo reads the Go build information of the file process pid runs.
func BuildInfo(pid int) (*debug.BuildInfo, error) { return buildinfo.ReadFile(exePath(pid)) }

// Getenv is the value of variable name in process pid's environment as it started
// (/proc/PID/environ); ok is false when it is not set or cannot be read.
func Getenv(pid int, name string) (value string, ok bool) {
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return "", false
	}
	for kv := range bytes.SplitSeq(env, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte(name+"=")); ok {
			return string(v), true
		}
	}
	return "", false
}

// LocalPortRange is the kernel's range of local ports for outgoing connections as
// /proc/sys/net/ipv4/ip_local_port_range holds it (one for IPv4 and IPv6), e.g. "32768\t60999\n".
func LocalPortRange() (string, error) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	return string(b), err
}
