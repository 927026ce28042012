package conditions

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/apiperf/apiperf/procfs"
	"github.com/apiperf/apiperf/scenario"
)

// Target is the target's process and build, from /proc when its process is known,
// otherwise from what its pprof cmdline endpoint says.
type Target struct {
	PID int `json:"pid,omitempty"`
	// Found says how the process was found: "--target-pid", "listening on 127.0.0.1:8080".
	Found      string `json:"found,omitempty"`
	Executable string `json:"executable,omitempty"`
	// Build is the Go build information read from the executable; nil for a program not
	// written in Go, or one that could not be read.
	Build *Build `json:"build,omitempty"`
	// GOMAXPROCS is the target's GOMAXPROCS (Go programs); GOMAXPROCSFrom says where it
	// came from: "environment" (its GOMAXPROCS variable) or "default" (the Go runtime's
	// rule for its version, CPU affinity and cgroup limit).
	GOMAXPROCS     int     `json:"gomaxprocs,omitempty"`
	GOMAXPROCSFrom string  `json:"gomaxprocs_from,omitempty"`
	CPUs           int     `json:"cpus,omitempty"`         // CPUs of its affinity
	CPULimit       float64 `json:"cpu_limit,omitempty"`    // cgroup CPU limit in cores; 0: none
	MemoryLimit    int64   `json:"memory_limit,omitempty"` // cgroup memory limit in bytes; 0: none
	// Cmdline is the target's command line as its pprof cmdline endpoint gave it (when its
	// process is not known), secrets redacted.
	Cmdline []string `json:"cmdline,omitempty"`
	// Notes say what could not be read, and why.
	Notes []string `json:"notes,omitempty"`
}

// Build is what the Go toolchain stamped into the target's executable.
type Build struct {
	GoVersion string `json:"go_version"`
	Path      string `json:"path,omitempty"`    // the main package
	Module    string `json:"module,omitempty"`  // the main module
	Version   string `json:"version,omitempty"` // of the main module, "(devel)" for a local build
	Revision  string `json:"revision,omitempty"`
	Time      string `json:"time,omitempty"` // of the revision
	Modified  bool   `json:"modified,omitempty"`
	Race      bool   `json:"race,omitempty"`
	// Settings are the other build settings that change its speed: GOARCH, GOAMD64 (and
	// the other architecture levels), CGO_ENABLED, -tags, -gcflags, -ldflags, -pgo.
	Settings map[string]string `json:"settings,omitempty"`
}

// speedSettings are the build settings kept in Build.Settings.
var speedSettings = []string{"GOOS", "GOARCH", "GOAMD64", "GOARM", "GOARM64", "GO386", "GOPPC64", "GORISCV64",
	"CGO_ENABLED", "-tags", "-gcflags", "-ldflags", "-pgo", "-asan", "-msan", "GOEXPERIMENT"}

// ReadBuild reads the Go build information of the file process pid runs (even if replaced
// or deleted since).
func ReadBuild(pid int) (*Build, error) {
	bi, err := procfs.BuildInfo(pid)
	if err != nil {
		return nil, fmt.Errorf("reading Go build information: %w", err)
	}
	b := &Build{GoVersion: bi.GoVersion, Path: bi.Path, Module: bi.Main.Path, Version: bi.Main.Version}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		case "-race":
			b.Race = s.Value == "true"
		default:
			for _, k := range speedSettings {
				if s.Key == k {
					if b.Settings == nil {
						b.Settings = map[string]string{}
					}
					b.Settings[k] = s.Value
				}
			}
		}
	}
	return b, nil
}

// ReadTarget reads what /proc says of process pid: its executable, Go build, GOMAXPROCS
// and cgroup limits. found says how pid was found. What cannot be read is a note.
func ReadTarget(pid int, found string) *Target {
	t := &Target{PID: pid, Found: found, CPUs: procfs.Cores(pid), CPULimit: procfs.CPULimit(pid), MemoryLimit: procfs.MemoryLimit(pid)}
	if p, err := procfs.Executable(pid); err == nil {
		t.Executable = p
	} else {
		t.Notes = append(t.Notes, fmt.Sprintf("its executable: %v", err))
	}
	b, err := ReadBuild(pid)
	if err != nil {
		if t.Executable != "" {
			t.Notes = append(t.Notes, "not a Go program, or its build information is unreadable: "+err.Error())
		}
		return t
	}
	t.Build = b
	t.GOMAXPROCS, t.GOMAXPROCSFrom = gomaxprocs(pid, b.GoVersion, t.CPUs, t.CPULimit)
	return t
}

// gomaxprocs is a Go process's GOMAXPROCS: its GOMAXPROCS variable when set, else the
// runtime's default: its CPUs, and since Go 1.25 no more than its cgroup limit rounded up
// (at least 2).
func gomaxprocs(pid int, goVersion string, cpus int, limit float64) (int, string) {
	if v, ok := procfs.Getenv(pid, "GOMAXPROCS"); ok {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return n, "environment"
		}
	}
	if cpus <= 0 {
		return 0, ""
	}
	n := cpus
	if limit > 0 && goAtLeast(goVersion, 25) {
		n = min(n, max(2, int(math.Ceil(limit))))
	}
	return n, "default"
}

// goAtLeast says whether a Go version such as "go1.26.8" is go1.minor or later.
func goAtLeast(v string, minor int) bool {
	rest, ok := strings.CutPrefix(v, "go1.")
	if !ok {
		return false
	}
	end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(rest)
	}
	n, err := strconv.Atoi(rest[:end])
	return err == nil && n >= minor
}

// FromCmdline is a target known only by the command line its pprof cmdline endpoint
// returned (its arguments separated by NUL bytes), with secrets redacted by the rule of every
// command line (scenario.RedactArgs); extra are more names (--redact). Nil for an empty
// command line.
func FromCmdline(body []byte, extra []string) *Target {
	args := strings.Split(strings.TrimRight(string(body), "\x00\n"), "\x00")
	if len(args) == 1 && args[0] == "" {
		return nil
	}
	return &Target{Found: "pprof cmdline", Cmdline: scenario.RedactArgs(args, extra, false)}
}

// String describes the target in one line: "go1.22.1 example.com/svc rev 1a2b3c4d5e6f
// (modified), -race, GOMAXPROCS 4".
func (t *Target) String() string {
	if t == nil {
		return "unknown"
	}
	var parts []string
	switch {
	case t.Build != nil:
		parts = append(parts, t.Build.String())
	case t.Executable != "":
		parts = append(parts, t.Executable)
	case len(t.Cmdline) > 0:
		parts = append(parts, strings.Join(t.Cmdline, " "))
	}
	if t.GOMAXPROCS > 0 {
		parts = append(parts, fmt.Sprintf("GOMAXPROCS %d", t.GOMAXPROCS))
	}
	if t.CPULimit > 0 {
		parts = append(parts, "cgroup CPU limit "+trim(t.CPULimit)+" cores")
	}
	if len(parts) == 0 {
		return "unknown"
	}
	return strings.Join(parts, ", ")
}

// String describes a build: "go1.22.1 example.com/svc rev 1a2b3c4d5e6f (modified), -race".
func (b *Build) String() string {
	s := b.GoVersion
	if p := orUnknown(b.Path, b.Module); p != "" {
		s += " " + p
	}
	if b.Revision != "" {
		s += " rev " + ShortRev(b.Revision)
		if b.Modified {
			s += " (modified)"
		}
	} else if b.Version != "" && b.Version != "(devel)" {
		s += " " + b.Version
	}
	if b.Race {
		s += ", -race"
	}
	return s
}

// ShortRev is the first 12 hex digits of a revision.
func ShortRev(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}
