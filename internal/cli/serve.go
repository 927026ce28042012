package cli

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/apiperf/apiperf/target"
	"github.com/spf13/pflag"
)

// cmdServe runs the built-in reference target until ctx is cancelled.
func cmdServe(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet("serve", e)
	fs.Usage = func() { serveUsage(fs) }
	var cfg target.Config
	var middleware, logFile string
	fs.StringVar(&cfg.Addr, "addr", target.DefaultAddr, "listen `host:port` (port 0: a free port)")
	fs.BoolVar(&cfg.AllowRemote, "allow-remote", false, "allow a non-loopback --addr")
	fs.BoolVar(&cfg.Demo, "demo", false, "demo mode: a JSON API behind a middleware chain, with pprof and metrics")
	fs.StringVar(&middleware, "middleware", strings.Join(target.DefaultMiddleware, ","), "demo middleware chain, outermost first, or none")
	fs.StringVar(&logFile, "log", "", "append the demo's log and dump output to `file` (default: discarded)")
	fs.BoolVar(&cfg.Pprof, "pprof", false, "mount net/http/pprof under /debug/pprof/ (default true with --demo)")
	fs.BoolVar(&cfg.Metrics, "metrics", false, "mount Prometheus metrics at /metrics (default true with --demo)")
	fs.DurationVar(&cfg.Delay, "delay", 0, "fixed delay before every response")
	fs.DurationVar(&cfg.Jitter, "jitter", 0, "extra uniform random delay in [0, jitter)")
	fs.IntVar(&cfg.Status, "status", 0, "status of /healthz and /knob responses (default 200)")
	fs.IntVar(&cfg.Size, "size", 0, "body size in bytes of /healthz and /knob responses (default: {\"status\":\"ok\"})")
	fs.DurationVar(&cfg.Stall, "stall", 0, "pause all responses for this long in every --stall-every period")
	fs.DurationVar(&cfg.StallEvery, "stall-every", 0, "stall period, from server start")
	fs.BoolVar(&cfg.TLS, "tls", false, "serve HTTPS (h2 and HTTP/1.1 by ALPN) with a self-signed certificate (clients need -k); cleartext serves HTTP/1.1 and h2c")
	fs.Float64Var(&cfg.MaxRPS, "max-rps", 0, "serve at most this many requests per second overall; the rest wait in line")
	fs.IntVar(&cfg.MaxConns, "max-conns", 0, "reset connections beyond this many open at once, as soon as they are accepted (a proxy's connection limit)")
	fault := fs.String("fault", "", "serve a hostile target instead, counting what it receives: "+faultList())
	faultN := fs.Int("fault-n", 0, "the fault's parameter: responses before close-after closes (3), huge-body's size (1 MiB)")
	grpcAddr := fs.String("grpc", "", "serve the built-in gRPC target instead, on `host:port` (apiperf.demo.Demo, with reflection): Echo, Watch (server stream), Chat;\n"+
		"with --pprof or --metrics they are served over HTTP on --addr beside it")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("serve: unexpected argument %q", fs.Arg(0))
	}
	if *grpcAddr != "" {
		var observe *target.Config // pprof and metrics over HTTP on --addr
		if cfg.Pprof || cfg.Metrics {
			observe = &target.Config{Addr: cfg.Addr, AllowRemote: cfg.AllowRemote, Pprof: cfg.Pprof, Metrics: cfg.Metrics}
		}
		return serveGRPC(ctx, e, target.GRPCConfig{Addr: *grpcAddr, AllowRemote: cfg.AllowRemote, TLS: cfg.TLS}, observe)
	}
	if *fault != "" {
		return serveHostile(ctx, e, cfg.Addr, target.Fault(*fault), *faultN)
	}
	if cfg.Demo {
		if !fs.Changed("pprof") {
			cfg.Pprof = true
		}
		if !fs.Changed("metrics") {
			cfg.Metrics = true
		}
	}
	if fs.Changed("middleware") {
		if !cfg.Demo {
			return usagef("serve: --middleware needs --demo")
		}
		cfg.Middleware = serveList(middleware)
	}
	if err := cfg.Validate(); err != nil {
		return usagef("serve: %w", err)
	}
	if logFile != "" {
		f, err := os.OpenFile(logFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return usagef("serve: opening log: %w", err)
		}
		defer f.Close()
		cfg.Log = f
	}
	srv, err := target.Start(cfg)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	fmt.Fprintf(e.stderr, "apiperf serve: %s\n", cfg)
	fmt.Fprintln(e.stdout, target.ListeningPrefix+srv.URL())
	if err := srv.Wait(ctx); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// serveUsage prints serve's help: what it serves, then its flags.
func serveUsage(fs *pflag.FlagSet) {
	fmt.Fprintln(fs.Output(), "Usage: apiperf serve [flags]\n\nStart the built-in reference target (plain, or --demo) on loopback.")
	fmt.Fprintln(fs.Output(), "Endpoints: /healthz (like a plain net/http server), /hot (CPU work in one named function),")
	fmt.Fprintln(fs.Output(), "/knob?delay=5ms&jitter=1ms&status=500&size=1024&chunked=1&close=1&work=100000&abort=1&garbage=1&hang=1")
	fmt.Fprintln(fs.Output(), "(work=N: N rounds of /hot's spin before answering), /events?count=20&delay=100ms&gap=10ms\n"+
		"(server-sent events: count of them, the first after delay, then one every gap). With --demo: a JSON API (/api/users/7, ...),")
	fmt.Fprintf(fs.Output(), "/debug/pprof/, /metrics, and one bottleneck each for the verdict:\n%s.\n\nFlags:\n", strings.Join(target.DemoPaths(), ", "))
	fs.PrintDefaults()
}

// serveGRPC runs the built-in gRPC target until ctx ends, and beside it in the same process
// the HTTP target observe (nil: none), whose address it prints first: where its pprof and
// metrics are, for --pprof and --metrics of a load on the gRPC one.
func serveGRPC(ctx context.Context, e *env, cfg target.GRPCConfig, observe *target.Config) error {
	g, err := target.StartGRPC(cfg)
	if err != nil {
		return usagef("serve: %w", err)
	}
	defer g.Close()
	if observe != nil {
		srv, err := target.Start(*observe)
		if err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		defer srv.Close()
		fmt.Fprintf(e.stderr, "apiperf serve: %s\n", observe)
		fmt.Fprintln(e.stdout, target.ListeningPrefix+srv.URL())
	}
	fmt.Fprintf(e.stderr, "apiperf serve: gRPC target apiperf.demo.Demo with reflection; request fields: name, delay_ms, fail_every, count, gap_ms, slow_every, slow_ms\n")
	fmt.Fprintln(e.stdout, target.ListeningPrefix+strings.TrimSuffix(g.URL(""), "/apiperf.demo.Demo/"))
	<-ctx.Done()
	return nil
}

// serveList splits a comma-separated flag value, dropping empty items.
func serveList(s string) []string {
	out := []string{}
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// serveHostile runs a hostile target until ctx ends, then says what it received and sent.
func serveHostile(ctx context.Context, e *env, addr string, f target.Fault, n int) error {
	h, err := target.StartHostileOn(addr, f, n)
	if err != nil {
		return usagef("serve: %w", err)
	}
	fmt.Fprintf(e.stderr, "apiperf serve: hostile target, fault %s\n", f)
	fmt.Fprintln(e.stdout, target.ListeningPrefix+h.URL())
	<-ctx.Done()
	h.Close()
	fmt.Fprintf(e.stderr, "apiperf serve: %s\n", h)
	return nil
}

func faultList() string {
	names := make([]string, len(target.Faults))
	for i, f := range target.Faults {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}
