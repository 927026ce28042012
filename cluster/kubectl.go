package cluster

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"
)

// Fetch is where `apiperf k8s fetch` takes a finished run's directory from: the coordinator
// of the manifests named Name in Namespace (through kubectl port-forward to its Service), or
// the coordinator at Addr.
type Fetch struct {
	Name      string // the manifests' --name (default "apiperf")
	Namespace string // default "default"
	Port      int    // the coordinator's port (default 7070)
	Kubectl   string // the kubectl program (default "kubectl")
	// Addr is the coordinator's address; "": kubectl port-forward to its Service.
	Addr string
	// Token is the cluster token; "": read from the run's Secret with kubectl.
	Token    string
	Dir      string // where to unpack
	MaxBytes int64  // bound of the files' data (0: DefaultMaxResults)
	// Wait is how long to keep trying while the coordinator is not serving yet (its run
	// still going, its pod not started); 0: one try.
	Wait time.Duration
	// Log receives progress lines (default: discarded).
	Log io.Writer
}

func (f Fetch) withDefaults() Fetch {
	m := Manifests{Name: f.Name, Namespace: f.Namespace, Port: f.Port}.withDefaults()
	f.Name, f.Namespace, f.Port = m.Name, m.Namespace, m.Port
	if f.Kubectl == "" {
		f.Kubectl = "kubectl"
	}
	if f.Log == nil {
		f.Log = io.Discard
	}
	return f
}

// PortForwardArgs is kubectl's command line that forwards a free loopback port to the
// coordinator's Service.
func (f Fetch) PortForwardArgs() []string {
	f = f.withDefaults()
	return []string{"port-forward", "--namespace", f.Namespace, "--address", "127.0.0.1", "svc/" + f.Name + "-coordinator", fmt.Sprintf(":%d", f.Port)}
}

// TokenArgs is kubectl's command line that prints the run's token (base64) from its Secret.
func (f Fetch) TokenArgs() []string {
	f = f.withDefaults()
	return []string{"get", "secret", "--namespace", f.Namespace, f.Name + "-token", "-o", "jsonpath={.data.token}"}
}

// forwarding is kubectl port-forward's line naming the local port.
var forwarding = lazyRegexp(`^Forwarding from (127\.0\.0\.1:[0-9]+) -> [0-9]+`)

// Run fetches the results into f.Dir and returns the files written, relative to it.
func (f Fetch) Run(ctx context.Context) ([]string, error) {
	f = f.withDefaults()
	if err := (Manifests{Name: f.Name, Namespace: f.Namespace, Port: f.Port}).withDefaults().checkNames(); len(err) > 0 {
		return nil, errors.Join(err...)
	}
	if f.Token == "" {
		tok, err := f.readToken(ctx)
		if err != nil {
			return nil, err
		}
		f.Token = tok
	}
	deadline := time.Now().Add(f.Wait)
	for {
		files, err := f.once(ctx)
		if err == nil || errors.Is(err, ErrRefused) || errors.Is(err, errUnpack) || errors.Is(err, errUnpacked) || ctx.Err() != nil || time.Now().After(deadline) {
			return files, err
		}
		fmt.Fprintf(f.Log, "apiperf: %v; trying again\n", err)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}

// once is one try: a port-forward (unless Addr is given) and the fetch through it.
func (f Fetch) once(ctx context.Context) ([]string, error) {
	if f.Addr != "" {
		return FetchResults(ctx, f.Addr, f.Token, f.Dir, f.MaxBytes)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, f.Kubectl, f.PortForwardArgs()...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", f.Kubectl, err)
	}
	defer cmd.Wait()
	defer cancel() // ends the port-forward before it is waited for
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := forwarding().FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
		close(addr)
	}()
	select {
	case a, ok := <-addr:
		if !ok {
			return nil, fmt.Errorf("kubectl %s ended without forwarding: %s", strings.Join(f.PortForwardArgs(), " "), Printable(strings.TrimSpace(stderr.String()), maxWarning))
		}
		fmt.Fprintf(f.Log, "apiperf: kubectl port-forward to svc/%s-coordinator on %s\n", f.Name, a)
		return FetchResults(ctx, a, f.Token, f.Dir, f.MaxBytes)
	case <-time.After(30 * time.Second):
		return nil, fmt.Errorf("kubectl %s: no forwarding within 30s", strings.Join(f.PortForwardArgs(), " "))
	}
}

// readToken reads the run's token from its Secret with kubectl.
func (f Fetch) readToken(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, f.Kubectl, f.TokenArgs()...)
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("reading the token with kubectl %s: %v: %s", strings.Join(f.TokenArgs(), " "), err, Printable(strings.TrimSpace(stderr.String()), maxWarning))
	}
	tok, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(b)))
	if err != nil {
		return "", fmt.Errorf("the Secret's token is not base64: %w", err)
	}
	return string(tok), nil
}
