package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestK8sSecretsReachCoordinator: the URL (with its password and token) and the header
// values go into the Secret, never into a Job, and the script named by -s is shipped; the
// decoded manifests' commands, expanded as the kubelet does, then send exactly what the
// user gave (no REDACTED) with the script applied.
func TestK8sSecretsReachCoordinator(t *testing.T) {
	if testing.Short() {
		t.Skip("processes")
	}
	t.Setenv(tokenEnv, "proc-test-token-0123456789")
	var good, bad atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("token") == "tok3n-$(HOME)" && r.Header.Get("X-Api-Key") == "s3cret header" && r.Header.Get("X-Script") == "yes" {
			good.Add(1)
		} else {
			bad.Add(1)
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	script := filepath.Join(t.TempDir(), "set header.lua")
	os.WriteFile(script, []byte(`wrk.headers["X-Script"] = "yes"`+"\n"), 0o600)
	url := strings.Replace(srv.URL, "http://", "http://user:PASSWD@", 1) + "/p?token=tok3n-$(HOME)"
	out, o := k8sManifests(t, "--workers", "3", "--fetch-timeout", "0", "--metrics-port", "0", "--", "run", "--join-timeout", "30s", "-n", "30", "-c", "3",
		"-H", "X-Api-Key: s3cret header", "-s", script, url)
	for _, secret := range []string{"PASSWD", "tok3n", "s3cret", "REDACTED", "X-Script"} {
		if bytes.Contains(out, []byte(secret)) {
			t.Errorf("the printed manifests hold %q in clear", secret)
		}
	}
	cmd := strings.Join(podCommand(t, o.coordinator), " ")
	if !strings.Contains(cmd, "-H $(APIPERF_ARG_") || !strings.Contains(cmd, "-s /files/") || strings.Contains(cmd, srv.URL) {
		t.Errorf("coordinator command %q: want the header and URL as $(APIPERF_ARG_n) and the script under /files", cmd)
	}
	exe, _ := os.Executable()
	coordArgv, workerArgv := localCommands(t, o, exe, freeAddr(t))
	coord := startApiperf(t, coordArgv[1:]...)
	for range 3 {
		startApiperf(t, workerArgv[1:]...)
	}
	if code := coord.wait(30 * time.Second); code != 0 || good.Load() != 30 || bad.Load() != 0 {
		t.Errorf("coordinator exit %d; the target got %d requests with the URL, header and script as given, %d without; want 0, 30, 0\n%s",
			code, good.Load(), bad.Load(), coord.stderr.String())
	}
}

// TestK8sRestricted: both pods meet Pod Security "restricted".
func TestK8sRestricted(t *testing.T) {
	t.Setenv(tokenEnv, "k8s-test-token-0123456789")
	_, o := k8sManifests(t, "--workers", "2", "--", "run", "-n", "100", "http://127.0.0.1:9/")
	for _, j := range []string{"coordinator", "workers"} {
		job := o.coordinator
		if j == "workers" {
			job = o.workers
		}
		pod := job.Spec.Template.Spec
		ps, cs := pod.SecurityContext, pod.Containers[0].SecurityContext
		if ps == nil || ps.RunAsNonRoot == nil || !*ps.RunAsNonRoot || ps.RunAsUser == nil || *ps.RunAsUser == 0 ||
			ps.SeccompProfile == nil || ps.SeccompProfile.Type != "RuntimeDefault" {
			t.Errorf("%s pod securityContext %+v: want runAsNonRoot, a non-root user and the RuntimeDefault seccomp profile", j, ps)
		}
		if cs == nil || cs.AllowPrivilegeEscalation == nil || *cs.AllowPrivilegeEscalation || cs.Capabilities == nil ||
			len(cs.Capabilities.Drop) != 1 || cs.Capabilities.Drop[0] != "ALL" || len(cs.Capabilities.Add) != 0 {
			t.Errorf("%s container securityContext %+v: want no privilege escalation and every capability dropped", j, cs)
		}
	}
}

// TestK8sRefusals: names Kubernetes would refuse (or that would inject YAML), and local
// files that cannot be shipped, are one line each and exit 2.
func TestK8sRefusals(t *testing.T) {
	t.Setenv(tokenEnv, "k8s-test-token-0123456789")
	dir := t.TempDir()
	mix := filepath.Join(dir, "mix.yaml")
	os.WriteFile(mix, []byte("- path: /x\n  body_file: big.json\n"), 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--namespace", "perf\nkind: Evil"}, `--namespace "perf\nkind: Evil": want a DNS-1123 label`},
		{[]string{"--namespace", "Perf"}, `--namespace "Perf": want a DNS-1123 label`},
		{[]string{"--name", "a\"b"}, `--name "a\"b": want lower-case letters`},
		{[]string{"--name", strings.Repeat("a", 60)}, "at most 51 characters"},
		{[]string{"--cpu", "1\nx: y"}, `--cpu "1\nx: y": want a Kubernetes quantity`},
		{[]string{"--", "run", "--scenario", mix, "http://127.0.0.1:9/"}, "names other local files (body_file, {{line}}), which apiperf k8s does not ship"},
		{[]string{"--", "run", "--body-file", "/dev/zero", "http://127.0.0.1:9/"}, "shipping /dev/zero: /dev/zero is a device, not a regular file"},
		{[]string{"--", "run", "--body-file", filepath.Join(dir, "missing"), "http://127.0.0.1:9/"}, "no such file"},
		{[]string{"--", "run", "--token-file", mix, "http://127.0.0.1:9/"}, "--token-file: apiperf k8s puts the token in the Secret"},
		// The load's own arguments are refused here as run, sweep and capacity refuse them.
		{[]string{"--", "run", "-c", "0", "-d", "1s", "http://127.0.0.1:9/"}, "connections must be at least 1, got 0"},
		{[]string{"--", "sweep", "--levels", "0", "http://127.0.0.1:9/"}, "level 0 must be at least 1"},
		{[]string{"--", "capacity", "--max-rate", "-5", "http://127.0.0.1:9/"}, `invalid argument "-5" for "--max-rate"`},
		{[]string{"--", "run", "-d", "1s"}, "run: no URL given"},
	} {
		args := append([]string{"k8s", "--workers", "2"}, tc.args...)
		if !strings.Contains(strings.Join(tc.args, " "), "--") {
			args = append(args, "--", "run", "-n", "10", "http://127.0.0.1:9/")
		}
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), args, &stdout, &stderr)
		msg := strings.TrimSpace(stderr.String())
		if code != ExitUsage || !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") || stdout.Len() != 0 {
			t.Errorf("apiperf %q = exit %d, stderr %q, %d bytes out; want exit 2 and one line with %q", args, code, msg, stdout.Len(), tc.want)
		}
	}
}
