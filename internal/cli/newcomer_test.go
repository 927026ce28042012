package cli

import (
	"bytes"
	"context"
	"runtime/debug"
	"strings"
	"testing"
)

// newcomerCLI runs apiperf in-process and returns the exit code, stdout and stderr.
func newcomerCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestVersionFromBuildInfo(t *testing.T) {
	code, out, _ := newcomerCLI(t, "--version")
	if code != ExitOK || !strings.HasPrefix(out, "apiperf ") || strings.Contains(out, "apiperf dev") {
		t.Errorf("apiperf --version: exit %d, %q; want the build's version, not dev", code, out)
	}
	for _, tc := range []struct {
		bi   debug.BuildInfo
		want string
	}{
		// go install github.com/apiperf/apiperf/cmd/apiperf@v1.2.0
		{debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.0"}}, "v1.2.0, go1.26.8"},
		// go build in a checkout: Go stamps a pseudo-version that already names the commit
		{debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261123053000-a418164aaaaa+dirty"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "a418164aaaaabbbbccccdddd"}, {Key: "vcs.modified", Value: "true"}}},
			"v0.0.0-20261123053000-a418164aaaaa+dirty, go1.26.8"},
		// go build with an older toolchain or -buildvcs on a local tree: (devel) plus the revision
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "a418164aaaaabbbbccccdddd"}, {Key: "vcs.time", Value: "2026-11-23T05:30:00Z"}, {Key: "vcs.modified", Value: "true"}}},
			"(devel), rev a418164aaaaa+modified 2026-11-23T05:30:00Z"},
	} {
		if got := buildVersion(&tc.bi); got != tc.want {
			t.Errorf("buildVersion(%+v) = %q; want %q", tc.bi.Main, got, tc.want)
		}
	}
}

func TestURLWithoutSchemeSuggestsHTTP(t *testing.T) {
	code, _, stderr := newcomerCLI(t, "run", "-d", "1s", "127.0.0.1:8080/x")
	want := "apiperf: URL \"127.0.0.1:8080/x\" has no scheme: did you mean http://127.0.0.1:8080/x ?\n"
	if code != ExitUsage || stderr != want {
		t.Errorf("apiperf run 127.0.0.1:8080/x: exit %d, stderr %q; want exit 2 and %q", code, stderr, want)
	}
}

func TestThreadsClampedIsSaid(t *testing.T) {
	url := sweepServer(t, 200)
	code, _, stderr := newcomerCLI(t, "run", "--no-history", "-c3", "-t4", "-n", "30", url)
	if code != ExitOK || !strings.Contains(stderr, "apiperf: note: running 3 threads, not 4: each thread needs at least one of the 3 connections") {
		t.Errorf("apiperf run -c3 -t4: exit %d, stderr %q; want a note that 3 threads run", code, stderr)
	}
	// Nothing is said when the user did not ask for a thread count.
	if _, _, stderr := newcomerCLI(t, "run", "--no-history", "-c1", "-n", "10", url); strings.Contains(stderr, "note:") {
		t.Errorf("apiperf run -c1 (default threads): stderr %q; want no note", stderr)
	}
}
