package cli

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestClusterRunCLI runs `run --workers 3` and three `worker --join` through cli.Run: the
// counting server and the merged summary both see exactly -n requests, run.json keeps the
// workers' shares, the workers exit 0 when the coordinator is done.
func TestClusterRunCLI(t *testing.T) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	t.Setenv(tokenEnv, "cli-test-token-0123456789")
	addr := freeAddr(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	codes := make([]int, 3)
	for k := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[k] = Run(ctx, []string{"worker", "--join", addr}, io.Discard, io.Discard)
		}()
	}
	out := filepath.Join(t.TempDir(), "run.json")
	hlog := filepath.Join(t.TempDir(), "run.hlog")
	var stdout, stderr bytes.Buffer
	code := Run(ctx, []string{"run", "--workers", "3", "--join-addr", addr, "--join-timeout", "20s", "-n", "3000", "-c", "6", "-o", out, "--hlog", hlog, srv.URL}, &stdout, &stderr)
	wg.Wait()
	if code != 0 {
		t.Fatalf("run --workers 3 exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	for k, c := range codes {
		if c != 0 {
			t.Errorf("worker %d exited %d, want 0", k+1, c)
		}
	}
	if served.Load() != 3000 || !strings.Contains(stdout.String(), "3000 requests in") {
		t.Errorf("server answered %d requests, want 3000; summary:\n%s", served.Load(), stdout.String())
	}
	if !strings.Contains(stdout.String(), "Workers: 3") {
		t.Errorf("summary lacks the worker table:\n%s", stdout.String())
	}
	if strings.Contains(stdout.String()+stderr.String(), "cli-test-token") {
		t.Error("the token was printed")
	}
	// The interval log holds the workers' merged intervals: every response once.
	if b, err := os.ReadFile(hlog); err != nil || !bytes.Contains(b, []byte("\n0.")) {
		t.Errorf("interval log %s: %v, want merged intervals:\n%s", hlog, err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cluster struct {
			Workers int `json:"workers"`
			Threads int `json:"threads"`
			Shares  []struct {
				Connections int   `json:"connections"`
				Requests    int64 `json:"requests"`
			} `json:"shares"`
		} `json:"cluster"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, s := range doc.Cluster.Shares {
		n += s.Requests
	}
	if doc.Cluster.Workers != 3 || len(doc.Cluster.Shares) != 3 || n != 3000 {
		t.Errorf("run.json cluster = %+v, want 3 workers sharing 3000 requests", doc.Cluster)
	}
	// wrk's header counts every worker's threads (each at least one, at most its 2
	// connections), not one generator's.
	want := fmt.Sprintf("  %d threads and 6 connections on 3 workers\n", doc.Cluster.Threads)
	if doc.Cluster.Threads < 3 || doc.Cluster.Threads > 6 || !strings.Contains(stdout.String(), want) {
		t.Errorf("header: want %q (run.json: %d threads):\n%s", want, doc.Cluster.Threads, stdout.String())
	}
	t.Logf("%s", stdout.String())
}

// joinWorkers starts n `apiperf worker --join addr` in this process; wait on the group.
func joinWorkers(addr string, n int) *sync.WaitGroup {
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			Run(context.Background(), []string{"worker", "--join", addr}, io.Discard, io.Discard)
		}()
	}
	return &wg
}

// TestClusterJoinTimeoutCLI: a worker that never joins makes run exit 1 without traffic.
func TestClusterJoinTimeoutCLI(t *testing.T) {
	t.Setenv(tokenEnv, "cli-test-token-0123456789")
	var stderr bytes.Buffer
	code := Run(context.Background(), []string{"run", "--workers", "2", "--join-addr", freeAddr(t), "--join-timeout", "200ms", "-n", "10", "-c", "2", "http://127.0.0.1:9/"}, io.Discard, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "0 of 2 joined") {
		t.Errorf("run with no worker exited %d, stderr %q; want 1 saying 0 of 2 joined", code, stderr.String())
	}
}

// TestClusterNeedsToken: no token is bad usage, before anything listens.
func TestClusterNeedsToken(t *testing.T) {
	t.Setenv(tokenEnv, "")
	var stderr bytes.Buffer
	code := Run(context.Background(), []string{"worker", "--join", "127.0.0.1:9"}, io.Discard, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), tokenEnv) {
		t.Errorf("worker without a token exited %d, stderr %q; want 2 naming %s", code, stderr.String(), tokenEnv)
	}
}

// TestClusterSweepCLI runs a two-level sweep over two workers: every level is split and
// merged exactly, and the sweep's files are written as for one machine.
func TestClusterSweepCLI(t *testing.T) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	t.Setenv(tokenEnv, "cli-test-token-0123456789")
	addr := freeAddr(t)
	wg := joinWorkers(addr, 2)
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"sweep", "--workers", "2", "--join-addr", addr, "--levels", "2,4", "-d", "1s", "--dir", dir, "--name", "so", "--no-report", srv.URL}, &stdout, &stderr)
	wg.Wait()
	if code != 0 {
		t.Fatalf("sweep --workers 2 exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, "so", "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Steps []struct {
			Label       string `json:"label"`
			Requests    int64  `json:"requests"`
			Concurrency int    `json:"concurrency"`
		} `json:"steps"`
		Cluster struct{ Workers int } `json:"cluster"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, s := range doc.Steps {
		n += s.Requests
	}
	// The server also answered the sweep's warmups (run by the workers, not recorded).
	if len(doc.Steps) != 2 || n == 0 || n > served.Load() || doc.Steps[1].Concurrency != 4 || doc.Cluster.Workers != 2 {
		t.Errorf("run.json steps %+v (%d responses), cluster %+v; the server answered %d; want 2 levels, c=4 last, 2 workers, at most the server's count",
			doc.Steps, n, doc.Cluster, served.Load())
	}
}

// TestClusterCapacityCLI runs a capacity search over two workers: its probes are split and
// merged, and run.json keeps the workers' shares.
func TestClusterCapacityCLI(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	t.Setenv(tokenEnv, "cli-test-token-0123456789")
	addr := freeAddr(t)
	wg := joinWorkers(addr, 2)
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"capacity", "--workers", "2", "--join-addr", addr, "--start", "100", "--max-rate", "200", "--max-probes", "2", "-d", "500ms", "--warmup", "0", "--dir", dir, "--name", "so", srv.URL}, &stdout, &stderr)
	wg.Wait()
	b, err := os.ReadFile(filepath.Join(dir, "so", "run.json"))
	if err != nil {
		t.Fatalf("capacity --workers 2 exited %d, no run.json: %v\nstderr:\n%s", code, err, stderr.String())
	}
	if !bytes.Contains(b, []byte(`"cluster"`)) || strings.Contains(stderr.String(), "partial") {
		t.Errorf("capacity --workers 2 exited %d; run.json without the cluster record or a partial run\nstderr:\n%s", code, stderr.String())
	}
}

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key as PEM files.
func selfSigned(t *testing.T) (certFile, keyFile string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "apiperf test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return certFile, keyFile
}

// TestClusterTLSCLI: run --join-cert/--join-key and worker --join-ca join over TLS.
func TestClusterTLSCLI(t *testing.T) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	t.Setenv(tokenEnv, "cli-test-token-0123456789")
	cert, key := selfSigned(t)
	addr := freeAddr(t)
	wcode := make(chan int, 1)
	var werr bytes.Buffer
	go func() {
		wcode <- Run(context.Background(), []string{"worker", "--join", addr, "--join-ca", cert}, io.Discard, &werr)
	}()
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"run", "--workers", "1", "--join-addr", addr, "--join-cert", cert, "--join-key", key, "--join-timeout", "20s", "-n", "300", "-c", "2", srv.URL}, &stdout, &stderr)
	if wc := <-wcode; code != 0 || wc != 0 || served.Load() != 300 {
		t.Errorf("run over TLS exited %d, worker %d, server %d requests; want 0, 0, 300\nstderr:\n%s\nworker:\n%s", code, wc, served.Load(), stderr.String(), werr.String())
	}
}
