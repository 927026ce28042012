package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/apiperf/apiperf/cluster"
	"github.com/apiperf/apiperf/grpcsource"
	"github.com/apiperf/apiperf/load"
	"github.com/apiperf/apiperf/measure"
	"github.com/apiperf/apiperf/scenario"
)

// tokenEnv holds the shared cluster token when --token-file is not given.
const tokenEnv = "APIPERF_TOKEN"

// clusterFlags make run a coordinator of workers (cluster package).
type clusterFlags struct {
	workers     int
	joinAddr    string
	joinTimeout time.Duration
	tokenFile   string
	cert, key   string
	serve       time.Duration // --serve-results
	token       string        // read by coordinate
}

func (f *clusterFlags) register(fs *pflag.FlagSet) {
	fs.IntVar(&f.workers, "workers", 0, "scale out: wait for `N` apiperf worker processes and split the load over them exactly (token: "+tokenEnv+" or --token-file)")
	fs.StringVar(&f.joinAddr, "join-addr", cluster.DefaultJoinAddr, "with --workers: the address workers join")
	fs.DurationVar(&f.joinTimeout, "join-timeout", cluster.DefaultJoinTimeout, "with --workers: give up (exit 1) when not every worker joined within this")
	registerTokenFile(fs, &f.tokenFile)
	fs.StringVar(&f.cert, "join-cert", "", "with --workers: workers join over TLS with this certificate (PEM; give --join-key too)")
	fs.StringVar(&f.key, "join-key", "", "with --workers: the private key of --join-cert (PEM)")
	fs.DurationVar(&f.serve, "serve-results", 0, "with --workers: once finished, serve the run's directory on --join-addr for up to this long, until `apiperf k8s fetch` takes it (the exit code stays the run's)")
}

func registerTokenFile(fs *pflag.FlagSet, p *string) {
	fs.StringVar(p, "token-file", "", "read the shared cluster token from this file (default: $"+tokenEnv+")")
}

// readToken returns the cluster token from file or the environment; it is never printed.
func readToken(file string) (string, error) {
	tok := os.Getenv(tokenEnv)
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("reading the token file: %w", err)
		}
		tok = strings.TrimSpace(string(b))
	}
	if tok == "" {
		return "", fmt.Errorf("a cluster needs a shared token: set %s or give --token-file", tokenEnv)
	}
	return tok, cluster.CheckToken(tok)
}

// coordinate starts the coordinator for --workers (nil without it) and waits for the
// workers to join; the script's text, the scenario and the statuses are what they get.
func (f *clusterFlags) coordinate(ctx context.Context, e *env, src *source, expected measure.StatusSet, extra []string) (*cluster.Coordinator, error) {
	if f.workers == 0 {
		return nil, nil
	}
	token, err := readToken(f.tokenFile)
	if err != nil {
		return nil, asUsage(err)
	}
	f.token = token
	job := cluster.Job{Scenario: src.scenario, ScriptArgs: extra, Expected: expected}
	if g, ok := src.Source.(*grpcsource.Source); ok {
		job.Encoded = g.Encoded()
	}
	if src.scenario.Script != "" {
		b, err := scenario.ReadFile(src.scenario.Script)
		if err != nil {
			return nil, asUsage(err)
		}
		job.ScriptCode = string(b)
	}
	var tlsConf *tls.Config
	if f.cert != "" || f.key != "" {
		pair, err := tls.LoadX509KeyPair(f.cert, f.key)
		if err != nil {
			return nil, usagef("--join-cert/--join-key: %v", err)
		}
		tlsConf = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	}
	if host, _, err := net.SplitHostPort(f.joinAddr); err == nil && tlsConf == nil {
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			fmt.Fprintf(e.stderr, "apiperf: warning: workers join on %s, beyond loopback: the plan (headers, body) travels unencrypted (give --join-cert and --join-key for TLS); anyone who can reach it needs the token\n", f.joinAddr)
		}
	}
	c, err := cluster.Listen(f.joinAddr, job, cluster.Options{Workers: f.workers, Token: token, JoinTimeout: f.joinTimeout, Log: e.stderr, TLS: tlsConf})
	if err != nil {
		return nil, asUsage(err)
	}
	if err := c.Join(ctx); err != nil {
		c.Close()
		fmt.Fprintf(e.stderr, "apiperf: %v\n", err)
		return nil, errFailed
	}
	return c, nil
}

// stepFunc is the run's step function: the coordinator's when scaling out, else the engine.
func stepFunc(c *cluster.Coordinator, local func(context.Context, load.Config) (*measure.Step, error)) func(context.Context, load.Config) (*measure.Step, error) {
	if c == nil {
		return local
	}
	return c.Step
}

func cmdWorker(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet("worker", e)
	join := fs.String("join", "", "the coordinator's address `HOST:PORT` (its --join-addr, as printed by apiperf run --workers N)")
	var tokenFile string
	registerTokenFile(fs, &tokenFile)
	patience := fs.Duration("dial-timeout", 30*time.Second, "keep trying to reach the coordinator this long")
	ca := fs.String("join-ca", "", "join over TLS, trusting the coordinator's certificate if signed by this CA (PEM)")
	serverName := fs.String("join-server-name", "", "with --join-ca: the name the coordinator's certificate must carry (default: the --join host)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: apiperf worker --join HOST:PORT\n\nJoin a coordinator, run the share of the load it sends with this machine's engine, and\nstream the results back. The worker never listens and stops when the coordinator goes away.\n\n%s", fs.FlagUsages())
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *join == "" || fs.NArg() > 0 {
		return usagef("worker: want --join HOST:PORT and no arguments")
	}
	token, err := readToken(tokenFile)
	if err != nil {
		return asUsage(err)
	}
	o := cluster.WorkerOptions{Log: e.stderr, Dial: *patience, Apiperf: version()}
	if *ca != "" {
		pem, err := os.ReadFile(*ca)
		if err != nil {
			return asUsage(fmt.Errorf("--join-ca: %w", err))
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return usagef("--join-ca %s: no PEM certificate in it", *ca)
		}
		o.TLS = &tls.Config{RootCAs: pool, ServerName: *serverName, MinVersion: tls.VersionTLS12}
	}
	err = cluster.Work(ctx, *join, token, cluster.Engine(e.stdout), o)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, cluster.ErrRefused):
		return asUsage(err)
	case ctx.Err() != nil:
		return fmt.Errorf("interrupted: %w", errFailed)
	}
	fmt.Fprintf(e.stderr, "apiperf: worker: %v\n", err)
	return errFailed
}
