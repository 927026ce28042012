package cli

import (
	"runtime/debug"
	"strings"
)

// Version overrides the version apiperf reports; release builds may set it with
// -ldflags "-X github.com/apiperf/apiperf/internal/cli.Version=v1.2.3". Left empty, the
// version comes from the build information Go stamps into the binary.
var Version = ""

// version is what `apiperf --version` prints and run.json records as the tool.
func version() string {
	if Version != "" {
		return Version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown (built without module information)"
	}
	return buildVersion(bi)
}

// buildVersion describes a build: the module version (set by `go install ...@v1.2.3`),
// then the VCS revision, its time and whether the tree was modified (set by `go build`
// inside a git checkout).
func buildVersion(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, at string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	parts := []string{v}
	if rev != "" && !strings.Contains(v, shortRev(rev)) {
		r := "rev " + shortRev(rev)
		if modified {
			r += "+modified"
		}
		if at != "" {
			r += " " + at
		}
		parts = append(parts, r)
	}
	if bi.GoVersion != "" {
		parts = append(parts, bi.GoVersion)
	}
	return strings.Join(parts, ", ")
}

// shortRev is the 12-character form of a commit hash, as pseudo-versions carry it.
func shortRev(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}
