//go:build linux

package load

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/apiperf/apiperf/measure"
)

// TestTLSNginx loads nginx over TLS (an ECDSA P-256 certificate; TLS 1.3 with OpenSSL's
// choice of suite, and TLS 1.2 with AES-GCM and with ChaCha20) on every I/O path, closed and
// open loop, and checks that connections nginx closes after each response resume their
// session. It skips where nginx is not installed.
func TestTLSNginx(t *testing.T) {
	if _, err := exec.LookPath("nginx"); err != nil {
		t.Skip("nginx is not installed")
	}
	addrs := startTLSNginx(t)
	for _, srv := range []struct {
		name, addr string
		opener     bool // the event loops open its records themselves (AES-GCM)
	}{
		{"TLS1.3", addrs[0], true}, {"TLS1.2/AES128-GCM", addrs[1], true}, {"TLS1.2/ChaCha20", addrs[2], false},
	} {
		for _, m := range []struct {
			name string
			mode ioMode
		}{{"evloop", ioEvloop}, {"uring", ioUring}, {"goroutines", ioGoroutines}} {
			for _, open := range []bool{false, true} {
				cfg := Config{Requests: 300, Connections: 10, Insecure: true, Timeout: measure.Duration(10 * time.Second)}
				name := srv.name + "/" + m.name + "/closed"
				if open {
					cfg.Rate, cfg.MaxConnections = 2000, 10
					name = srv.name + "/" + m.name + "/open"
				}
				t.Run(name, func(t *testing.T) {
					o0 := tlsLoopOpeners.Load()
					s := run(t, m.mode, context.Background(), "https://"+srv.addr+"/healthz", cfg)
					if s.Successes != 300 || s.Errors.Total() != 0 {
						t.Errorf("%d successes, errors %+v; want 300 and none", s.Successes, s.Errors)
					}
					if o := tlsLoopOpeners.Load() - o0; (o > 0) != (srv.opener && m.mode != ioGoroutines) {
						t.Errorf("the loop's opener served %d connections; want it only for AES-GCM on the event loops", o)
					}
				})
			}
			t.Run(srv.name+"/"+m.name+"/resumed", func(t *testing.T) {
				r0, o0 := tlsLoopResumed.Load(), tlsLoopOpeners.Load()
				s := run(t, m.mode, context.Background(), "https://"+srv.addr+"/close", Config{Requests: 40, Connections: 2, Insecure: true, Timeout: measure.Duration(10 * time.Second)})
				if s.Successes != 40 || s.Connects < 20 {
					t.Errorf("%d successes on %d connections; want 40 on a connection each", s.Successes, s.Connects)
				}
				if r := tlsLoopResumed.Load() - r0; m.mode != ioGoroutines && r < s.Connects/2 {
					t.Errorf("%d of %d connections resumed a session; want most", r, s.Connects)
				}
				if o := tlsLoopOpeners.Load() - o0; m.mode != ioGoroutines && srv.opener && o != s.Connects {
					t.Errorf("the loop's opener served %d of %d connections; want all, resumed ones too", o, s.Connects)
				}
			})
		}
	}
}

// startTLSNginx starts nginx with a new certificate on three loopback ports (TLS 1.3; TLS
// 1.2 with AES-128-GCM; TLS 1.2 with ChaCha20-Poly1305) and waits until they answer.
func startTLSNginx(t *testing.T) [3]string {
	t.Helper()
	dir := t.TempDir()
	writeCert(t, dir)
	var addrs [3]string
	var ports [3]int
	for i := range ports {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = ln.Addr().(*net.TCPAddr).Port
		addrs[i] = ln.Addr().String()
		ln.Close()
	}
	conf := fmt.Sprintf(`worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path %[1]s/body; proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fcgi; uwsgi_temp_path %[1]s/uwsgi; scgi_temp_path %[1]s/scgi;
  ssl_certificate %[1]s/cert.pem; ssl_certificate_key %[1]s/key.pem;
  server {
    listen 127.0.0.1:%[2]d ssl; ssl_protocols TLSv1.3;
    location /healthz { default_type application/json; return 200 '{"status":"ok"}'; }
    location /close { keepalive_timeout 0; return 200 'once'; }
  }
  server {
    listen 127.0.0.1:%[3]d ssl; ssl_protocols TLSv1.2; ssl_ciphers ECDHE-ECDSA-AES128-GCM-SHA256;
    location /healthz { default_type application/json; return 200 '{"status":"ok"}'; }
    location /close { keepalive_timeout 0; return 200 'once'; }
  }
  server {
    listen 127.0.0.1:%[4]d ssl; ssl_protocols TLSv1.2; ssl_ciphers ECDHE-ECDSA-CHACHA20-POLY1305;
    location /healthz { default_type application/json; return 200 '{"status":"ok"}'; }
    location /close { keepalive_timeout 0; return 200 'once'; }
  }
}
`, dir, ports[0], ports[1], ports[2])
	if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("nginx", "-p", dir, "-e", filepath.Join(dir, "error.log"), "-c", filepath.Join(dir, "nginx.conf"), "-g", "daemon off;")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := time.Now().Add(30 * time.Second)
	for _, a := range addrs {
		for {
			c, err := tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", a, &tls.Config{InsecureSkipVerify: true})
			if err == nil {
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
				t.Fatalf("nginx on %s did not answer in TLS: %v\n%s", a, err, log)
			}
			time.Sleep(20 * time.Millisecond) // polling for nginx to listen, not a timing assumption
		}
	}
	return addrs
}

// writeCert writes a self-signed ECDSA P-256 certificate for 127.0.0.1 and its key to dir.
func writeCert(t *testing.T, dir string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
	if os.WriteFile(filepath.Join(dir, "cert.pem"), certPEM, 0o644) != nil || os.WriteFile(filepath.Join(dir, "key.pem"), keyPEM, 0o600) != nil {
		t.Fatal("writing the certificate")
	}
}
