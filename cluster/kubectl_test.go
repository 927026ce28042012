package cluster

import (
	"context"
	"encoding/base64"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFetchThroughKubectl: `apiperf k8s fetch` reads the token from the run's Secret and
// port-forwards to the coordinator's Service with kubectl, then fetches through the forward.
// kubectl is a script here (no cluster on this machine) that records its command lines and
// "forwards" to a real coordinator serving on loopback.
func TestFetchThroughKubectl(t *testing.T) {
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "run.json"), []byte(`{"version":2}`), 0o644)
	addr := freePort(t)
	served := make(chan error, 1)
	go func() { served <- ServeResults(context.Background(), addr, src, testToken, time.Minute, nil) }()

	bin := t.TempDir()
	kubectl := filepath.Join(bin, "kubectl")
	script := `#!/bin/sh
echo "$@" >> ` + filepath.Join(bin, "calls") + `
case "$1" in
port-forward) echo "Forwarding from ` + addr + ` -> 7070"; exec sleep 60 ;;
get) printf %s ` + base64.StdEncoding.EncodeToString([]byte(testToken)) + ` ;;
esac
`
	if err := os.WriteFile(kubectl, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) { // until it listens
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ServeResults does not listen on %s: %v", addr, err)
		}
	}
	dst := filepath.Join(t.TempDir(), "results")
	f := Fetch{Name: "load", Namespace: "perf", Kubectl: kubectl, Dir: dst}
	files, err := f.Run(context.Background())
	if err != nil || len(files) != 1 || files[0] != "run.json" {
		t.Fatalf("Fetch.Run = %q, %v; want run.json", files, err)
	}
	calls, _ := os.ReadFile(filepath.Join(bin, "calls"))
	want := "get secret --namespace perf load-token -o jsonpath={.data.token}\n" +
		"port-forward --namespace perf --address 127.0.0.1 svc/load-coordinator :7070\n"
	if string(calls) != want {
		t.Errorf("kubectl ran:\n%s\nwant:\n%s", calls, want)
	}
	if err := <-served; err != nil {
		t.Errorf("ServeResults = %v; want nil once fetched", err)
	}
}

// A name that is not a DNS label is refused before kubectl runs.
func TestFetchNames(t *testing.T) {
	_, err := Fetch{Name: "Bad_Name", Kubectl: "/nonexistent/kubectl"}.Run(context.Background())
	if err == nil || strings.Contains(err.Error(), "kubectl") {
		t.Errorf("Fetch.Run with a bad name = %v; want the name refused, kubectl not run", err)
	}
}
